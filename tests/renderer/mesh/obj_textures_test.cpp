// OBJ + MTL textures: map_Ke texels land where OBJ's uv convention (v up) puts them, map_Kd
// and map_d are found (with Windows-style names), a missing texture names its MTL material.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "gltf_fixture.h"
#include "test_paths.h"
#include "renderer/render_helpers.h"
#include "mesh/mesh.h"
#include "world/scene.h"

TEST_SUITE_BEGIN("unit");

namespace fs = std::filesystem;

namespace {

// A quad spanning [-1, 1]^2 at z = 0 facing +Z, uv (0, 0) at its bottom-left corner.
void write_quad_obj(const fs::path& dir, const std::string& mtl) {
  std::ofstream(dir / "quad.obj") << "mtllib quad.mtl\n"
                                      "v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
                                      "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
                                      "usemtl lamp\nf 1/1 2/2 3/3 4/4\n";
  std::ofstream(dir / "quad.mtl") << mtl;
}

// A camera at z = 5 sees the quad's middle half (uv 0.25 .. 0.75; half-height 0.5 at the quad).
std::string scene_toml(int size) {
  return "[render]\nwidth = " + std::to_string(size) + "\nheight = " + std::to_string(size) +
         "\nspp = 4\n[camera]\nposition = [0, 0, 5]\nlook_at = [0, 0, 0]\nfov = 11.4212\n"
         "[[object]]\ntype = \"mesh\"\npath = \"quad.obj\"\nsmooth = false\n";
}

}  // namespace

TEST_CASE("OBJ/MTL: map_Ke texels appear where OBJ's uv puts them (v up the image)") {
  fs::path dir = test_paths::temp_dir("obj_map_ke");
  gltf_fixture::write_png(dir / "Textures" / "Glow.PNG", 4, 4, 4, gltf_fixture::four_colour_blocks());
  // Written on Windows: backslash and another case than the file on disk.
  write_quad_obj(dir, "newmtl lamp\nKd 0 0 0\nmap_Ke -clamp on Textures\\glow.png\n");
  std::ofstream(dir / "scene.toml") << scene_toml(8);
  rt::SceneDesc desc = rt::parse_scene_file((dir / "scene.toml").string());
  CHECK(desc.asset_files.size() == 3);  // quad.obj, quad.mtl, Glow.PNG
  auto scene = rt::load_scene(desc);
  auto rgba = test_render::render_full(*scene);
  auto at = [&](int x, int y, int c) { return rgba[4 * (static_cast<size_t>(y) * 8 + x) + c]; };
  // The image's top row is the top of the texture: red at the top-left, white bottom-right.
  CHECK(at(0, 0, 0) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(at(0, 0, 1) == doctest::Approx(0.0));
  CHECK(at(7, 0, 1) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(at(0, 7, 2) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(at(7, 7, 0) == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(at(7, 7, 1) == doctest::Approx(1.0).epsilon(1e-5));
  fs::remove_all(dir);
}

TEST_CASE("OBJ/MTL: map_Kd, map_d and bump become the material's textures") {
  fs::path dir = test_paths::temp_dir("obj_maps");
  gltf_fixture::write_png(dir / "kd.png", 2, 2, 4, gltf_fixture::four_colours());
  gltf_fixture::write_png(dir / "h.png", 2, 2, 1, {0, 128, 64, 255});
  write_quad_obj(dir, "newmtl lamp\nKd 0.5 0.5 0.5\nmap_Kd kd.png\nmap_d d.png\nbump -bm 2 h.png\n");
  gltf_fixture::write_png(dir / "d.png", 4, 4, 1, {0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 255});
  rt::LoadedMeshFile f = rt::load_mesh_file((dir / "quad.obj").string(), {});
  REQUIRE(f.materials.size() >= 1);
  const rt::MaterialDesc& m = f.materials[f.mesh.face_materials.at(0)];
  CHECK(m.albedo.valid());
  CHECK(m.albedo.value == rt::Color{1.0f});
  CHECK(m.opacity_map.valid());
  CHECK(m.alpha_mode == rt::AlphaMode::mask);
  CHECK(m.bump_map.valid());
  CHECK(m.bump_scale == doctest::Approx(2 * 0.004));
  CHECK(f.textures.size() == 3);

  // The cut-out: through the left half (alpha 0) the white sky shows; the right half is the
  // textured quad.
  std::ofstream(dir / "scene.toml") << scene_toml(8) << "[environment]\ncolor = [1, 1, 1]\n";
  auto scene = rt::load_scene(rt::parse_scene_file((dir / "scene.toml").string()));
  auto rgba = test_render::render_full(*scene);
  CHECK(test_render::mean_channel(rgba, 8, 0, 0, 2, 8, 0) == doctest::Approx(1.0).epsilon(1e-5));  // sky
  CHECK(test_render::mean_channel(rgba, 8, 6, 0, 8, 8, 0) < 0.9);  // the textured quad, lit
  fs::remove_all(dir);
}

TEST_CASE("OBJ/MTL: a texture that does not exist is an error naming the mesh and the material") {
  fs::path dir = test_paths::temp_dir("obj_missing_tex");
  write_quad_obj(dir, "newmtl lamp\nmap_Kd gone.png\n");
  CHECK_THROWS_WITH_AS(rt::load_mesh_file((dir / "quad.obj").string(), {}), doctest::Contains("gone.png"),
                       rt::SceneError);
  std::ofstream(dir / "scene.toml") << scene_toml(8);
  // The scene parse already finds it (so a master never ships a job that cannot load).
  CHECK_THROWS_WITH_AS(rt::parse_scene_file((dir / "scene.toml").string()), doctest::Contains("gone.png"),
                       rt::SceneError);
  fs::remove_all(dir);
}

TEST_CASE("PLY: vertex colours become the surface colour") {
  fs::path dir = test_paths::temp_dir("ply_colours");
  std::ofstream(dir / "tri.ply") << "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                    "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
                                    "element face 1\nproperty list uchar int vertex_indices\nend_header\n"
                                    "0 0 0 255 0 0\n1 0 0 255 0 0\n0 1 0 255 0 0\n3 0 1 2\n";
  rt::LoadedMeshFile f = rt::load_mesh_file((dir / "tri.ply").string(), {});
  REQUIRE(f.mesh.colors.size() == f.mesh.positions.size());
  CHECK(f.mesh.colors[0] == rt::Color(1, 0, 0));
  CHECK(f.materials[0].vertex_colors);
  CHECK(f.materials[0].albedo.value == rt::Color{1.0f});
  fs::remove_all(dir);
}

TEST_SUITE_END();
