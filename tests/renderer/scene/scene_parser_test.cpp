// Scene file parsing of valid scenes: defaults, every section and object kind, transforms, camera
// keyframes, asset lookup, and the example of docs/scene-format.md. The located message for each
// class of mistake is checked in scene_parser_errors_test.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "scene/scene_desc.h"
#include "test_paths.h"
#include "scene_parser_fixture.h"

TEST_SUITE_BEGIN("unit");

namespace fs = std::filesystem;

namespace {

using scene_parser_fixture::k_materials;

void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

bool near(rt::Vec3 a, rt::Vec3 b, float eps = 1e-4f) { return rt::length(a - b) < eps; }

}  // namespace

TEST_CASE("scene parser: an empty file gives the defaults") {
  rt::SceneDesc s = rt::parse_scene_string("", "empty.toml");
  CHECK(s.path == "empty.toml");
  CHECK(s.settings.width == 640);
  CHECK(s.settings.height == 480);
  CHECK(s.settings.spp == 16);
  CHECK(s.settings.integrator == rt::IntegratorKind::path);
  CHECK(s.settings.frames == 1);
  CHECK(s.camera.key.fov_degrees == 45.0f);
  CHECK(s.camera.keyframes.empty());
  CHECK(s.objects.empty());
  CHECK(s.materials.empty());
  CHECK(s.asset_files.empty());
}

TEST_CASE("scene parser: render, camera, environment, textures, materials and lights") {
  rt::SceneDesc s = rt::parse_scene_string(R"(
[render]
width = 320
height = 200
spp = 4
integrator = "whitted"
max_depth = 3
seed = 42
frames = 24
ambient = 0.1
max_sample_value = 10
noise_threshold = 0.02
min_samples = 16

[camera]
position = [0, 1, 5]
look_at = [0, 1, 0]
fov = 30
aperture = 0.1
focus_distance = 5

[environment]
color = [0.1, 0.2, 0.3]
strength = 2
rotation = 90

[[texture]]
name = "checks"
type = "checker"
even = 1
odd = [0, 0, 0.5]
scale = 4

[[material]]
name = "floor"
type = "plastic"
albedo = "checks"
specular = 0.05
roughness = 0.3

[[material]]
name = "lamp"
type = "emissive"
emission = [10, 10, 8]
two_sided = true

[[light]]
type = "spot"
position = [0, 5, 0]
direction = [0, -2, 0]
intensity = 100
cone = 20
falloff = 10

[[light]]
type = "directional"
direction = [1, -1, 0]
intensity = [1, 2, 3]
)", "x.toml");
  CHECK(s.settings.width == 320);
  CHECK(s.settings.height == 200);
  CHECK(s.settings.spp == 4);
  CHECK(s.settings.integrator == rt::IntegratorKind::whitted);
  CHECK(s.settings.max_depth == 3);
  CHECK(s.settings.seed == 42);
  CHECK(s.settings.frames == 24);
  CHECK(s.settings.ambient == rt::Color(0.1f));
  CHECK(s.settings.max_sample_value == 10.0f);
  CHECK(s.settings.noise_threshold == 0.02f);
  CHECK(s.settings.min_samples == 16);
  CHECK(s.camera.key.position == rt::Vec3(0, 1, 5));
  CHECK(s.camera.key.up == rt::Vec3(0, 1, 0));  // default kept
  CHECK(s.camera.key.fov_degrees == 30.0f);
  CHECK(s.camera.key.aperture == doctest::Approx(0.1));
  CHECK(s.environment.color == rt::Color(0.1f, 0.2f, 0.3f));
  CHECK(s.environment.strength == 2.0f);
  CHECK(s.environment.rotation_degrees == 90.0f);
  CHECK(s.environment.image_path.empty());
  REQUIRE(s.textures.size() == 1);
  CHECK(s.textures[0].kind == rt::TextureKind::checker);
  CHECK(s.textures[0].even == rt::Color(1.0f));
  CHECK(s.textures[0].odd == rt::Color(0, 0, 0.5f));
  CHECK(s.textures[0].scale == 4.0f);
  REQUIRE(s.materials.size() == 2);
  CHECK(s.materials[0].kind == rt::MaterialKind::plastic);
  CHECK(s.materials[0].albedo.texture == 0);
  CHECK(s.materials[0].roughness == doctest::Approx(0.3));
  CHECK(s.materials[0].loc.str() == "x.toml:34:1");
  CHECK(s.materials[1].kind == rt::MaterialKind::emissive);
  CHECK(s.materials[1].emission == rt::Color(10, 10, 8));
  CHECK(s.materials[1].two_sided);
  REQUIRE(s.lights.size() == 2);
  CHECK(s.lights[0].kind == rt::LightKind::spot);
  CHECK(s.lights[0].direction == rt::Vec3(0, -1, 0));  // normalised
  CHECK(s.lights[0].intensity == rt::Color(100.0f));
  CHECK(s.lights[0].cone_degrees == 20.0f);
  CHECK(s.lights[0].falloff_degrees == 10.0f);
  CHECK(s.lights[1].kind == rt::LightKind::directional);
  CHECK(s.lights[1].intensity == rt::Color(1, 2, 3));
}

TEST_CASE("scene parser: every object kind, prototypes and instances") {
  fs::path dir = test_paths::temp_dir("parser_objects");
  write_file(dir / "models" / "bunny.obj", "v 0 0 0\n");
  write_file(dir / "scene.toml", std::string(k_materials) + R"(
[[prototype]]
name = "tree"
[[prototype.object]]
type = "cylinder"
material = "red"
radius = 0.1
height = 2
segments = 12
[[prototype.object]]
type = "sphere"
material = "red"
center = [0, 2, 0]

[[object]]
name = "ball"
type = "sphere"
material = "glass"
center = [1, 2, 3]
radius = 0.5

[[object]]
type = "quad"
material = "red"
corner = [0, 0, 0]
edge_u = [1, 0, 0]
edge_v = [0, 1, 0]

[[object]]
type = "plane"
material = "red"
point = [0, -1, 0]
size = 10

[[object]]
type = "box"
material = "red"
min = [0, 0, 0]
max = [1, 2, 3]

[[object]]
type = "lathe"
material = "red"
profile = [[0, 0], [1, 0], [1, 1], [0, 1]]
segments = 16
smooth = false

[[object]]
type = "mesh"
path = "models/bunny.obj"

[[object]]
type = "mesh"
path = "models/bunny.obj"
material = "red"

[[object]]
type = "instance"
prototype = "tree"
translate = [5, 0, 0]
)");
  rt::SceneDesc s = rt::parse_scene_file((dir / "scene.toml").string());
  REQUIRE(s.prototypes.size() == 1);
  CHECK(s.prototypes[0].name == "tree");
  REQUIRE(s.prototypes[0].objects.size() == 2);
  CHECK(s.prototypes[0].objects[0].kind == rt::ShapeKind::cylinder);
  CHECK(s.prototypes[0].objects[0].segments == 12);
  CHECK(s.prototypes[0].objects[0].height == 2.0f);
  CHECK(s.prototypes[0].objects[1].center == rt::Vec3(0, 2, 0));

  REQUIRE(s.objects.size() == 8);
  const rt::ObjectDesc& ball = s.objects[0];
  CHECK(ball.name == "ball");
  CHECK(ball.kind == rt::ShapeKind::sphere);
  CHECK(ball.material == 1);
  CHECK(ball.center == rt::Vec3(1, 2, 3));
  CHECK(ball.radius == 0.5f);
  CHECK(ball.world_from_object.is_identity());

  CHECK(s.objects[1].kind == rt::ShapeKind::quad);
  CHECK(s.objects[1].edge_v == rt::Vec3(0, 1, 0));

  const rt::ObjectDesc& plane = s.objects[2];  // a 10 x 10 quad facing +Y around (0, -1, 0)
  CHECK(plane.kind == rt::ShapeKind::quad);
  CHECK(near(rt::normalize(rt::cross(plane.edge_u, plane.edge_v)), {0, 1, 0}));
  CHECK(rt::length(plane.edge_u) == doctest::Approx(10));
  CHECK(near(plane.corner + (plane.edge_u + plane.edge_v) * 0.5f, {0, -1, 0}));

  CHECK(s.objects[3].kind == rt::ShapeKind::box);
  CHECK(s.objects[3].box_max == rt::Vec3(1, 2, 3));
  CHECK(s.objects[4].kind == rt::ShapeKind::lathe);
  CHECK(s.objects[4].profile.size() == 4);
  CHECK(s.objects[4].profile[2].x == 1.0f);
  CHECK(s.objects[4].profile[2].y == 1.0f);
  CHECK(s.objects[4].segments == 16);
  CHECK_FALSE(s.objects[4].smooth);

  const std::string bunny = (dir / "models" / "bunny.obj").lexically_normal().string();
  CHECK(s.objects[5].kind == rt::ShapeKind::mesh);
  CHECK(s.objects[5].material == -1);  // the file's own materials
  CHECK(s.objects[5].path == bunny);
  CHECK(s.objects[6].material == 0);
  CHECK(s.asset_files == std::vector<std::string>{bunny});  // listed once

  CHECK(s.objects[7].kind == rt::ShapeKind::instance);
  CHECK(s.objects[7].prototype == 0);
  CHECK(near(s.objects[7].world_from_object.point({0, 0, 0}), {5, 0, 0}));
  fs::remove_all(dir);
}

TEST_CASE("scene parser: transforms scale, then rotate about X, Y, Z, then translate") {
  rt::SceneDesc s = rt::parse_scene_string(std::string(k_materials) + R"(
[[object]]
type = "sphere"
material = "red"
scale = [2, 3, 1]
rotate = [90, 0, 90]
translate = [10, 20, 30]

[[object]]
type = "sphere"
material = "red"
scale = 2
)", "x.toml");
  REQUIRE(s.objects.size() == 2);
  // (1,1,0) -scale-> (2,3,0) -rotX 90-> (2,0,3) -rotZ 90-> (0,2,3) -translate-> (10,22,33)
  CHECK(near(s.objects[0].world_from_object.point({1, 1, 0}), {10, 22, 33}));
  CHECK(near(s.objects[1].world_from_object.point({1, 1, 1}), {2, 2, 2}));
}

TEST_CASE("scene parser: camera keyframes inherit from [camera] and interpolate") {
  rt::SceneDesc s = rt::parse_scene_string(R"(
[render]
frames = 10
[camera]
position = [0, 0, 10]
fov = 40
[[camera.keyframe]]
frame = 3
[[camera.keyframe]]
frame = 7
position = [4, 0, 10]
fov = 60
)", "x.toml");
  const rt::CameraDesc& c = s.camera;
  REQUIRE(c.keyframes.size() == 2);
  CHECK(c.keyframes[0].key.position == rt::Vec3(0, 0, 10));
  CHECK(c.keyframes[1].key.look_at == rt::Vec3(0, 0, 0));  // inherited default
  CHECK(c.at_frame(1).position == rt::Vec3(0, 0, 10));     // held before the first
  CHECK(c.at_frame(3).fov_degrees == 40.0f);
  CHECK(c.at_frame(5).position.x == doctest::Approx(2));
  CHECK(c.at_frame(5).fov_degrees == doctest::Approx(50));
  CHECK(c.at_frame(6).position.x == doctest::Approx(3));
  CHECK(c.at_frame(7).position == rt::Vec3(4, 0, 10));
  CHECK(c.at_frame(10).fov_degrees == 60.0f);  // held after the last

  rt::CameraDesc still;
  still.key.fov_degrees = 20;
  CHECK(still.at_frame(99).fov_degrees == 20.0f);
}

TEST_CASE("scene parser: asset paths resolve against the scene folder, search dirs and FARM_ASSETS") {
  fs::path dir = test_paths::temp_dir("parser_assets");
  write_file(dir / "scene" / "local.exr", "x");
  write_file(dir / "lib1" / "tex.png", "x");
  write_file(dir / "lib2" / "mesh.ply", "x");
  write_file(dir / "lib2" / "tex.png", "x");  // shadowed by lib1
  const std::string scene = (dir / "scene" / "s.toml").string();
  const std::string text = R"(
[environment]
image = "local.exr"
[[texture]]
name = "t"
type = "image"
path = "tex.png"
[[object]]
type = "mesh"
path = "mesh.ply"
)";
  rt::AssetSearch search{{(dir / "lib1").string()}};

  // Without FARM_ASSETS the mesh is not found; the message lists where it looked.
  ::unsetenv("FARM_ASSETS");
  std::string missing;
  try {
    rt::parse_scene_string(text, scene, search);
  } catch (const rt::SceneError& e) {
    missing = e.what();
  }
  CHECK(missing == scene + ":10:8: mesh file 'mesh.ply' not found; looked in: " + (dir / "scene").string() + ", " +
                       (dir / "lib1").string());

  ::setenv("FARM_ASSETS", ("/nonexistent:" + (dir / "lib2").string()).c_str(), 1);
  rt::SceneDesc s = rt::parse_scene_string(text, scene, search);
  ::unsetenv("FARM_ASSETS");
  CHECK(s.environment.image_path == (dir / "scene" / "local.exr").string());
  CHECK(s.textures[0].path == (dir / "lib1" / "tex.png").string());
  CHECK(s.objects[0].path == (dir / "lib2" / "mesh.ply").string());
  CHECK(s.asset_files == std::vector<std::string>{s.environment.image_path, s.textures[0].path, s.objects[0].path});

  // Absolute paths are used as they are inside an asset folder, and refused outside them all
  // (`farm render` could not ship them; `single` reads what render ships).
  std::string abs_text = "[environment]\nimage = \"" + (dir / "lib2" / "tex.png").string() + "\"\n";
  rt::AssetSearch lib2;
  lib2.dirs = {(dir / "lib2").string()};
  CHECK(rt::parse_scene_string(abs_text, "x.toml", lib2).environment.image_path == (dir / "lib2" / "tex.png").string());
  CHECK_THROWS_WITH_AS(rt::parse_scene_string(abs_text, "x.toml"),
                       doctest::Contains("is outside the scene's folder and every asset folder"), rt::SceneError);
  fs::remove_all(dir);
}

TEST_CASE("scene parser: the example in docs/scene-format.md parses") {
  std::ifstream in(test_paths::project("docs/scene-format.md"));
  REQUIRE(in);
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```toml\n";
  size_t begin = doc.rfind(fence);
  REQUIRE(begin != std::string::npos);
  begin += fence.size();
  size_t end = doc.find("```", begin);
  REQUIRE(end != std::string::npos);
  rt::SceneDesc s = rt::parse_scene_string(doc.substr(begin, end - begin), "example.toml");
  CHECK(s.settings.frames == 48);
  CHECK(s.camera.keyframes.size() == 2);
  CHECK(s.materials.size() == 4);
  CHECK(s.prototypes.size() == 1);
  CHECK(s.objects.size() == 5);
}

TEST_SUITE_END();
