// Pass lists, their channel layout and the names Blender's multi-layer EXR reader expects.
#include <doctest/doctest.h>

#include "scene/passes.h"
#include "scene/scene_desc.h"
#include "renderer/render_helpers.h"

TEST_SUITE_BEGIN("unit");

TEST_CASE("passes: a list parses in any order into the layout's order, and an unknown word is named") {
  std::string error;
  std::optional<rt::PassSet> set = rt::parse_pass_list(" depth, albedo ,sample_count", error);
  REQUIRE(set);
  CHECK(rt::pass_list_text(*set) == "albedo,depth,sample_count");
  CHECK(rt::pass_channel_count(*set) == 5);
  CHECK(rt::pass_channel_names(*set) == std::vector<std::string>{"ViewLayer.Denoising Albedo.R", "ViewLayer.Denoising Albedo.G",
                                                                 "ViewLayer.Denoising Albedo.B", "ViewLayer.Depth.Z",
                                                                 "ViewLayer.Debug Sample Count.X"});
  REQUIRE(rt::parse_pass_list("all", error));
  CHECK(*rt::parse_pass_list("all", error) == rt::k_all_passes);
  CHECK(rt::pass_channel_count(rt::k_all_passes) == 14);
  CHECK(rt::layered_channel_names(0) ==
        std::vector<std::string>{"ViewLayer.Combined.R", "ViewLayer.Combined.G", "ViewLayer.Combined.B", "ViewLayer.Combined.A"});
  CHECK(*rt::parse_pass_list("", error) == 0);
  CHECK(*rt::parse_pass_list("none", error) == 0);
  CHECK_FALSE(rt::parse_pass_list("albedo,shadow", error));
  CHECK(error == "unknown pass 'shadow' (passes: all, albedo, normal, depth, position, object_id, material_id, "
                 "sample_count, variance)");
}

TEST_CASE("passes: the scene file's [render] passes key, and its error") {
  auto scene = test_render::scene_from(R"(
[render]
width = 8
height = 8
passes = "normal,variance"
[[material]]
name = "white"
type = "diffuse"
[[object]]
type = "sphere"
center = [0, 0, -3]
radius = 1
material = "white"
)");
  CHECK(rt::pass_list_text(scene->desc.settings.passes) == "normal,variance");
  CHECK_THROWS_WITH_AS(test_render::scene_from("[render]\npasses = \"normals\"\n"),
                       doctest::Contains("unknown pass 'normals'"), rt::SceneError);
}
