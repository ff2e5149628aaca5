// glTF 2.0 scenes: exact images of files the tests write (emissive textures seen through the
// file's own camera, punctual lights, cut-outs, texture transforms), scene-level defaults,
// and clear errors for broken files.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "gltf_fixture.h"
#include "test_paths.h"
#include "render/render.h"
#include "renderer/render_helpers.h"
#include "world/scene.h"

TEST_SUITE_BEGIN("unit");

namespace fs = std::filesystem;
using gltf_fixture::QuadOptions;

namespace {

const char* k_emissive_textured = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
  "emissiveTexture": {"index": 0}, "emissiveFactor": [1, 1, 1],
  "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 2}}}])";

struct Rendered {
  rt::SceneDesc desc;
  std::vector<float> rgba;
  int width = 0;
  rt::Color at(int x, int y) const {
    const float* p = &rgba[4 * (static_cast<size_t>(y) * width + x)];
    return {p[0], p[1], p[2]};
  }
};

// Renders a glTF scene file at `size` x `size`, 4 spp, with a black environment and the
// box filter (each pixel sees only its own square: these tests read texels through pixels).
Rendered render_gltf(const std::string& path, int size = 8) {
  Rendered r;
  r.desc = rt::parse_scene_file(path);
  r.desc.settings.width = r.desc.settings.height = size;
  r.desc.settings.spp = 4;
  r.desc.settings.filter = rt::PixelFilter::box;
  r.desc.settings.filter_width = 1.0f;
  r.desc.environment.color = rt::Color{0.0f};
  auto scene = rt::load_scene(r.desc);
  r.rgba = test_render::render_full(*scene);
  r.width = size;
  return r;
}

void check_colour(rt::Color got, rt::Color want, double epsilon = 1e-5) {
  CHECK(got.x == doctest::Approx(want.x).epsilon(epsilon));
  CHECK(got.y == doctest::Approx(want.y).epsilon(epsilon));
  CHECK(got.z == doctest::Approx(want.z).epsilon(epsilon));
}

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name) : path(test_paths::temp_dir(name)) {
    gltf_fixture::write_png(path / "tex.png", 2, 2, 4, gltf_fixture::four_colours());
  }
  ~Dir() { fs::remove_all(path); }
};

// The plain quad (one empty material), to break one edit at a time: each check writes it with
// `edits` applied (every `from` must occur) and expects loading to be refused with `message`.
struct QuadToBreak {
  std::string path, good;
  QuadToBreak(const Dir& d, const std::string& name) {
    QuadOptions o;
    o.material_json = R"([{}])";
    path = gltf_fixture::write_quad(d.path, name, o);
    std::ifstream in(path);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void check_refused(const std::vector<std::pair<std::string, std::string>>& edits, const std::string& message) const {
    std::string json = good;
    for (const auto& edit : edits) {
      const std::string& from = edit.first;  // not a structured binding: CAPTURE's lambda takes it (C++17)
      const std::string& to = edit.second;
      size_t at = json.find(from);
      REQUIRE(at != std::string::npos);
      json.replace(at, from.size(), to);
      CAPTURE(to);
    }
    std::ofstream(path) << json;
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(rt::load_scene(rt::parse_scene_file(path)), doctest::Contains(message.c_str()), rt::SceneError);
  }
  void check_refused(const std::string& from, const std::string& to, const std::string& message) const {
    check_refused({{from, to}}, message);
  }
};

}  // namespace

TEST_CASE("glTF: an emissive 2x2 texture shows its texels where the file's orthographic camera sees them") {
  Dir d("gltf_texels");
  QuadOptions o;
  o.material_json = k_emissive_textured;
  Rendered r = render_gltf(gltf_fixture::write_quad(d.path, "quad", o));
  // glTF uv (0, 0) is the image's top-left texel (red); emission 1 x strength 2.
  check_colour(r.at(0, 0), {2, 0, 0});
  check_colour(r.at(7, 0), {0, 2, 0});
  check_colour(r.at(0, 7), {0, 0, 2});
  check_colour(r.at(7, 7), {2, 2, 2});
  CHECK(r.desc.cameras.size() == 1);
  CHECK(r.desc.camera.key.ortho_height == doctest::Approx(2.0));
  CHECK(r.desc.camera_aspect == doctest::Approx(1.0));
}

// Replaces the first `from` in the file at `path` by `to`.
void replace_in_file(const std::string& path, const std::string& from, const std::string& to) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

TEST_CASE("glTF: a URI's '..' is resolved by name, as URIs are: 'sub/../x.bin' reads x.bin whatever 'sub' is") {
  // What the asset list names (resolve_gltf_uri, lexical) and what is read must be one file: the
  // farm's workers hold the listed files only, never an empty 'sub' (issue 38).
  Dir d("gltf_dot_dot");
  QuadOptions o;
  o.material_json = k_emissive_textured;
  o.texture_uri = "sub/../tex.png";
  const std::string gltf = gltf_fixture::write_quad(d.path, "quad", o);  // tex.png: Dir's
  replace_in_file(gltf, R"("uri": "quad.bin")", R"("uri": "sub/../quad.bin")");
  for (const char* how : {"no folder 'sub'", "an empty folder 'sub'", "'sub' a link to another folder"}) {
    CAPTURE(how);
    if (std::string(how) == "an empty folder 'sub'") fs::create_directory(d.path / "sub");
    if (std::string(how) == "'sub' a link to another folder") {
      // By the OS, sub/../quad.bin would be elsewhere/../quad.bin: a file the URI's check never saw.
      fs::remove(d.path / "sub");
      fs::create_directories(d.path / "elsewhere" / "deeper");
      fs::create_directory_symlink(d.path / "elsewhere" / "deeper", d.path / "sub");
      std::ofstream(d.path / "elsewhere" / "quad.bin") << "not the quad";
    }
    Rendered r = render_gltf(gltf);
    check_colour(r.at(0, 0), {2, 0, 0});
    check_colour(r.at(7, 7), {2, 2, 2});
  }
}

TEST_CASE("glTF: KHR_texture_transform moves the texture") {
  Dir d("gltf_transform");
  QuadOptions o;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
    "emissiveTexture": {"index": 0, "extensions": {"KHR_texture_transform": {"offset": [0.5, 0.5]}}},
    "emissiveFactor": [1, 1, 1]}])";
  Rendered moved = render_gltf(gltf_fixture::write_quad(d.path, "moved", o));
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0},
    "emissiveTexture": {"index": 0}, "emissiveFactor": [1, 1, 1]}])";
  Rendered plain = render_gltf(gltf_fixture::write_quad(d.path, "plain", o));
  // Shifted by half the texture, the middle of the quad reads the clamped bottom-right texel.
  check_colour(moved.at(3, 3), {1, 1, 1});
  check_colour(moved.at(7, 2), {1, 1, 1});
  check_colour(plain.at(0, 0), {1, 0, 0});
  CHECK(plain.at(3, 3).x < 0.99f);  // untransformed, the middle mixes the four texels
}

TEST_CASE("glTF: alphaMode MASK lets the emitter behind a cut-out quad through") {
  Dir d("gltf_mask");
  // Alpha 0 in the left column of texels, 1 in the right one.
  gltf_fixture::write_png(d.path / "alpha.png", 2, 2, 4, {0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0, 255});
  QuadOptions o;
  o.texture_uri = "alpha.png";
  o.second_quad = true;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "baseColorTexture": {"index": 0},
      "metallicFactor": 0}, "alphaMode": "MASK", "alphaCutoff": 0.5},
    {"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1], "metallicFactor": 0}, "emissiveFactor": [1, 1, 1]}])";
  Rendered r = render_gltf(gltf_fixture::write_quad(d.path, "mask", o));
  for (int y = 0; y < 8; ++y) {
    CAPTURE(y);
    // Through the hole: the emitter (plus 5e-5 of light its own coat reflects back from the
    // cut-out quad's black back face).
    check_colour(r.at(0, y), {1, 1, 1}, 1e-3);
    check_colour(r.at(1, y), {1, 1, 1}, 1e-3);
    // The opaque half is black (no light reaches its front), and hides the emitter.
    check_colour(r.at(6, y), {0, 0, 0});
    check_colour(r.at(7, y), {0, 0, 0});
  }
}

TEST_CASE("glTF: a KHR_lights_punctual point light lights the quad with intensity / d^2") {
  Dir d("gltf_light");
  auto render_at = [&](float distance) {
    QuadOptions o;
    o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [1, 1, 1, 1], "metallicFactor": 0,
      "roughnessFactor": 1}}])";
    o.extensions_json = R"({"KHR_lights_punctual": {"lights": [{"type": "point", "intensity": 10}]}})";
    o.extra_nodes = {R"({"extensions": {"KHR_lights_punctual": {"light": 0}}, "translation": [0, 0, )" +
                     std::to_string(distance) + "]}"};
    Rendered r = render_gltf(gltf_fixture::write_quad(d.path, "light" + std::to_string(static_cast<int>(distance)), o), 16);
    CHECK(r.desc.lights.size() == 1);
    CHECK(r.desc.notices.empty());  // camera and light given: no defaults applied
    return test_render::mean_channel(r.rgba, 16, 7, 7, 9, 9, 1);
  };
  double near = render_at(8), far = render_at(16);
  CHECK(near > 0.01);
  CHECK(near / far == doctest::Approx(4.0).epsilon(0.02));
}

TEST_CASE("glTF: a file without camera or light gets a framing camera and a white sky, each with a notice") {
  Dir d("gltf_defaults");
  QuadOptions o;
  o.ortho_camera = false;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.5, 0.5, 1], "metallicFactor": 0}}])";
  rt::SceneDesc desc = rt::parse_scene_file(gltf_fixture::write_quad(d.path, "bare", o));
  CHECK(desc.notices.size() == 2);
  CHECK(desc.environment.color == rt::Color{1.0f});
  CHECK(desc.cameras.empty());
  // The framing camera looks at the quad's centre and sees all of it.
  CHECK(rt::length(desc.camera.key.look_at) < 1e-5f);
  desc.settings.width = desc.settings.height = 16;
  desc.settings.spp = 2;
  auto scene = rt::load_scene(desc);
  auto rgba = test_render::render_full(*scene);
  CHECK(test_render::mean_channel(rgba, 16, 7, 7, 9, 9, 0) > 0.1);  // the lit quad in the middle
}

TEST_CASE("A scene in which nothing emits light loads with a notice that the image will be black") {
  Dir d("unlit_notice");
  QuadOptions o;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0.5, 0.5, 0.5, 1]}}])";
  rt::SceneDesc desc = rt::parse_scene_file(gltf_fixture::write_quad(d.path, "unlit", o));
  CHECK(rt::load_scene(desc)->notices.empty());  // the default white sky lights it
  desc.environment.color = rt::Color{0.0f};
  auto scene = rt::load_scene(desc);
  REQUIRE(scene->notices.size() == 1);
  CHECK(scene->notices[0].find("nothing in the scene emits light") != std::string::npos);
}

TEST_CASE("An OBJ/PLY file given as the scene is refused with a hint, not a TOML syntax error") {
  Dir d("mesh_as_scene");
  fs::path obj = d.path / "box.obj";
  std::ofstream(obj) << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  try {
    (void)rt::parse_scene_file(obj.string());
    FAIL("a mesh file was accepted as a scene");
  } catch (const rt::SceneError& e) {
    std::string what = e.what();
    CHECK(what.find("box.obj' is a mesh file, not a scene") != std::string::npos);
    CHECK(what.find("[[object]]") != std::string::npos);
  }
}

TEST_CASE("glTF: --camera picks a camera by name or index, an unknown one lists them") {
  Dir d("gltf_cameras");
  QuadOptions o;
  o.material_json = R"([{}])";
  o.extra_nodes = {R"({"camera": 1, "translation": [0, 0, 9]})"};
  std::string path = gltf_fixture::write_quad(d.path, "cams", o);
  // Add a named perspective camera as camera 1.
  std::ifstream in(path);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  json.replace(json.find(R"("cameras": [)") + 12, 0,
               R"({"name": "wide", "type": "perspective", "perspective": {"yfov": 1.0, "aspectRatio": 2.0, "znear": 0.1}}, )");
  // Now "wide" is camera 0 and the orthographic one camera 1; the first node's camera index
  // (0) is the perspective one, the extra node's (1) the orthographic one.
  std::ofstream(path) << json;
  rt::SceneDesc desc = rt::parse_scene_file(path);
  REQUIRE(desc.cameras.size() == 2);
  CHECK(desc.cameras[0].name == "wide");
  CHECK(desc.camera_aspect == doctest::Approx(2.0));
  CHECK(desc.camera.key.fov_degrees == doctest::Approx(1.0 * 180 / 3.14159265));
  rt::use_camera(desc, "1");
  CHECK(desc.camera.key.ortho_height == doctest::Approx(2.0));
  CHECK(desc.camera.key.position.z == doctest::Approx(9.0));
  rt::use_camera(desc, "wide");
  CHECK(desc.camera.key.ortho_height == 0);
  CHECK_THROWS_WITH_AS(rt::use_camera(desc, "tele"), doctest::Contains("0 'wide', 1 'camera 1'"), rt::SceneError);
}

TEST_CASE("glTF: broken files are refused with the reason and the file") {
  Dir d("gltf_broken");
  const QuadToBreak quad(d, "broken");
  const std::string& path = quad.path;
  auto check_refused = [&](const std::string& from, const std::string& to, const std::string& message) {
    quad.check_refused(from, to, message);
  };
  check_refused(R"("uri": "broken.bin")", R"("uri": "missing.bin")", "/missing.bin' not found");  // not "not in the folder"
  check_refused(R"("uri": "tex.png")", R"("uri": "nowhere.png")", "nowhere.png' not found");
  check_refused(R"("uri": "tex.png")", R"("uri": "/etc/passwd")", "absolute path");
  check_refused(R"("uri": "tex.png")", R"("uri": "http://example.com/a.png")", "not a relative file name");
  check_refused(R"("count": 6)", R"("count": 600)", "accessor 4");
  check_refused(R"("nodes": [{"mesh": 0})", R"("nodes": [{"mesh": 0, "children": [0]})", "cycle");
  check_refused(R"("indices": 4)", R"("indices": 9)", "indices accessor");
  check_refused(R"("asset": {"version": "2.0"},)", R"("asset": {"version": "2.0"}, "extensionsRequired": ["KHR_draco_mesh_compression"],)",
                "KHR_draco_mesh_compression");
  std::ofstream(path) << "{ not json";
  CHECK_THROWS_WITH_AS(rt::parse_scene_file(path), doctest::Contains("broken.gltf"), rt::SceneError);
}

TEST_CASE("glTF: offsets near 2^64 do not wrap past the bounds checks") {
  // Issue 26: byteOffset + length wrapped to a small number, passed the checks, and the
  // accessor read memory before its buffer (exit 0 with foreign geometry, or SIGSEGV).
  Dir d("gltf_wrap");
  const QuadToBreak quad(d, "wrap");
  const std::string accessor0 = R"({"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min")";
  const std::string view0 = R"({"buffer": 0, "byteOffset": 0, "byteLength": 48})";
  for (const std::string offset : {"18446744073709551600", "18446744073709551615", "18446744073709551568"}) {
    quad.check_refused(accessor0, R"({"bufferView": 0, "byteOffset": )" + offset +
                                      R"(, "componentType": 5126, "count": 4, "type": "VEC3", "min")",
                       "accessor 0: reads past the end of its bufferView");
    quad.check_refused(view0, R"({"buffer": 0, "byteOffset": )" + offset + R"(, "byteLength": 48})",
                       "runs past the end of buffer 0");
  }
  // An image stored in a bufferView whose offset wraps (tinygltf copies it out unchecked).
  quad.check_refused(
      {{R"("images": [{"uri": "tex.png"}])", R"("images": [{"bufferView": 5, "mimeType": "image/png"}])"},
       {R"({"buffer": 0, "byteOffset": 176, "byteLength": 12}])",
        R"({"buffer": 0, "byteOffset": 176, "byteLength": 12}, {"buffer": 0, "byteOffset": 18446744073709551600, "byteLength": 64}])"}},
      "runs past the end of its buffer");
}

TEST_CASE("glTF: whole numbers outside what the schema allows are refused, not narrowed or skipped") {
  // tinygltf keeps indices in an int: 4294967297 became 1, a sparse count of 2^32 became 0, and
  // a negative byteOffset or a fractional index was skipped as if absent (second adversarial pass).
  Dir d("gltf_integers");
  const QuadToBreak quad(d, "ints");
  const std::string need_index = "glTF needs a whole number from 0 to 2147483647 here";
  quad.check_refused(R"("indices": 4)", R"("indices": 4294967300)",
                     "meshes[0].primitives[0].indices is 4294967300: " + need_index);
  quad.check_refused(R"("indices": 4)", R"("indices": 4.0)", "meshes[0].primitives[0].indices is 4.0: " + need_index);
  quad.check_refused(R"("indices": 4)", R"("indices": "4")", "meshes[0].primitives[0].indices is \"4\": " + need_index);
  quad.check_refused(R"("POSITION": 0)", R"("POSITION": 4294967296)",
                     "meshes[0].primitives[0].attributes.POSITION is 4294967296: " + need_index);
  quad.check_refused(R"("scenes": [{"nodes": [0)", R"("scenes": [{"nodes": [-1)", "scenes[0].nodes[0] is -1: " + need_index);
  quad.check_refused(R"({"bufferView": 2,)", R"({"bufferView": -2,)", "accessors[2].bufferView is -2: " + need_index);
  quad.check_refused(R"("count": 6)", R"("count": 6, "sparse": {"count": 4294967296, "indices": {"bufferView": 4, "componentType": 5123}, "values": {"bufferView": 4}})",
                     "accessors[4].sparse.count is 4294967296: " + need_index);
  quad.check_refused(R"({"buffer": 0, "byteOffset": 48,)", R"({"buffer": 0, "byteOffset": -4,)",
                     "bufferViews[1].byteOffset is -4: glTF needs a whole number from 0 here");
  quad.check_refused(R"("material": 0)", R"("material": 9)", "material 9, which does not exist (the file has 1)");
  // The application's own data is its business, and deep nesting is not walked.
  std::string json = quad.good;
  json.replace(json.find(R"("asset": {)"), 10, R"("asset": {"extras": {"index": -7, "count": 1e99}, )");
  json.replace(json.find(R"("scene": 0,)"), 11, R"("scene": 0, "extensionsUsed": [], "extras": )" + std::string(10000, '[') +
                                                   std::string(10000, ']') + ",");
  std::ofstream(quad.path) << json;
  CHECK_NOTHROW(rt::load_scene(rt::parse_scene_file(quad.path)));
}

TEST_CASE("glTF: the shared DamagedHelmet loads as a textured scene") {
  if (!test_paths::have_shared_scenes()) {
    MESSAGE("skipped: ../shared/scenes is absent");
    return;
  }
  rt::SceneDesc desc = rt::parse_scene_file(test_paths::shared_scenes() + "/damaged-helmet/DamagedHelmet.gltf");
  CHECK(desc.asset_files.size() == 6);  // the .bin and five images (the occlusion map too)
  desc.settings.width = desc.settings.height = 24;
  desc.settings.spp = 1;
  auto scene = rt::load_scene(desc);
  CHECK(scene->textures.size() == 4);
  CHECK(scene->stats.emitters > 0);    // the emissive map's lit triangles
  CHECK(scene->stats.emitters < 2000); // not all 15,452: dark ones are left to BSDF sampling
}

TEST_CASE("glTF: a TOML scene imports a glTF scene and adjusts its camera, sky and lights") {
  Dir d("gltf_import");
  QuadOptions o;
  o.material_json = k_emissive_textured;
  gltf_fixture::write_quad(d.path, "quad", o);
  std::ofstream(d.path / "scene.toml") << R"([import]
path = "quad.gltf"
camera = "0"
[render]
width = 8
height = 8
spp = 4
[camera]
position = [0, 0, 6]
[environment]
color = [0, 0, 0]
[[light]]
type = "point"
position = [0, 0, 3]
intensity = 1
)";
  rt::SceneDesc desc = rt::parse_scene_file((d.path / "scene.toml").string());
  CHECK(desc.objects.size() == 1);                       // the glTF's geometry
  CHECK(desc.camera.key.ortho_height == doctest::Approx(2.0));  // its camera ...
  CHECK(desc.camera.key.position.z == doctest::Approx(6.0));    // ... moved by [camera]
  CHECK(desc.lights.size() == 1);                        // the TOML's light
  CHECK(desc.environment.color == rt::Color{0.0f});
  CHECK(desc.asset_files.size() == 3);                   // quad.gltf, quad.bin, tex.png
  auto scene = rt::load_scene(desc);
  auto rgba = test_render::render_full(*scene);
  CHECK(rgba[0] >= 2.0f);  // the emissive red texel (plus a little reflected light) at the top-left
  std::ofstream(d.path / "bad.toml") << "[import]\npath = \"quad.gltf\"\ncamera = \"tele\"\n";
  CHECK_THROWS_WITH_AS(rt::parse_scene_file((d.path / "bad.toml").string()), doctest::Contains("bad.toml:3:10"),
                       rt::SceneError);
}

TEST_CASE("glTF: fuzz findings stay fixed") {
  // A GLB whose embedded image's bufferView runs past the BIN chunk (tinygltf passed it on
  // unchecked; we copied beyond the buffer).
  const std::string path = test_paths::project("tests/fuzz/corpus/fuzz_gltf/glb_image_view_past_buffer");
  Dir d("gltf_fuzz_findings");
  fs::copy_file(path, d.path / "finding.glb");
  CHECK_THROWS_WITH_AS(rt::parse_scene_file((d.path / "finding.glb").string()),
                       doctest::Contains("runs past the end of its buffer"), rt::SceneError);
}

TEST_SUITE_END();
