// Scene file parsing: defaults, every section and object kind, transforms, camera keyframes,
// asset lookup, and the exact located message for each class of mistake.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "scene/scene_desc.h"
#include "test_paths.h"

namespace fs = std::filesystem;

namespace {

// The SceneError message for `text` parsed as "x.toml", or "(no error)".
std::string error_of(const std::string& text, const rt::AssetSearch& search = {}) {
  try {
    rt::parse_scene_string(text, "x.toml", search);
  } catch (const rt::SceneError& e) {
    return e.what();
  }
  return "(no error)";
}

void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

bool near(rt::Vec3 a, rt::Vec3 b, float eps = 1e-4f) { return rt::length(a - b) < eps; }

const char* k_materials = R"(
[[material]]
name = "red"
type = "diffuse"
albedo = [0.8, 0.1, 0.1]

[[material]]
name = "glass"
type = "glass"
ior = 1.5
)";

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
  CHECK(s.materials[0].loc.str() == "x.toml:32:1");
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

TEST_CASE("scene parser: source locations print as file:line:column") {
  CHECK(rt::SourceLoc{"a.toml", 3, 7}.str() == "a.toml:3:7");
  CHECK(rt::SourceLoc{"a.toml", 0, 0}.str() == "a.toml");
}

TEST_CASE("scene parser: unknown keys are errors with the nearest valid key") {
  CHECK(error_of("[render]\nwidht = 5\n") == "x.toml:2:1: unknown key 'widht' in [render]; did you mean 'width'?");
  CHECK(error_of("[render]\n  spp = 4\n  zzzzzz = 1\n") ==
        "x.toml:3:3: unknown key 'zzzzzz' in [render]; valid keys: width, height, spp, integrator, max_depth, "
        "seed, frames, ambient, max_sample_value, filter, filter_width");
  CHECK(error_of("[rendr]\n") == "x.toml:1:2: unknown key 'rendr' in the top level; did you mean 'render'?");
  CHECK(error_of("[[objects]]\n") == "x.toml:1:3: unknown key 'objects' in the top level; did you mean 'object'?");
  // A key of another type says which types it belongs to.
  CHECK(error_of(std::string(k_materials) +
                 "[[object]]\ntype = \"box\"\nmaterial = \"red\"\nradius = 2\n") ==
        "x.toml:14:1: 'radius' does not apply to object type 'box' (it is for: sphere, cylinder)");
}

TEST_CASE("scene parser: wrong types, ranges and non-finite numbers name the value") {
  CHECK(error_of("[render]\nspp = -3\n") == "x.toml:2:7: 'spp' must be an integer in 1..65536, got -3");
  CHECK(error_of("[render]\nspp = 2.5\n") == "x.toml:2:7: 'spp' must be an integer in 1..65536, got 2.5");
  // 16384 x 16384 is exactly the 2^28 pixel limit.
  CHECK(error_of("[render]\nwidth = 16384\nheight = 16384\n") == "(no error)");
  CHECK(error_of("[render]\nintegrator = \"bidir\"\n") ==
        "x.toml:2:14: unknown integrator 'bidir'; valid: whitted, path");
  CHECK(error_of("[render]\nfilter = \"mitchell\"\n") ==
        "x.toml:2:10: unknown pixel filter 'mitchell'; valid: box, gaussian, blackman-harris");
  CHECK(error_of("[render]\nfilter = \"gaussian\"\nfilter_width = 9\n") ==
        "x.toml:3:16: 'filter_width' must be a number in 0.5..6, got 9");
  CHECK(error_of("[camera]\nposition = \"here\"\n") ==
        "x.toml:2:12: 'position': expected [x, y, z] (3 numbers), got a string");
  CHECK(error_of("[camera]\nposition = [1, 2]\n") ==
        "x.toml:2:12: 'position': expected [x, y, z] (3 numbers), got an array of 2 values");
  CHECK(error_of("[camera]\nfov = 180\n") == "x.toml:2:7: 'fov' must be a number > 0 and < 180, got 180");
  CHECK(error_of("[camera]\nfov = nan\n") == "x.toml:2:7: 'fov' must be a finite number, got nan");
  CHECK(error_of("[camera]\nposition = [0, -inf, 1]\n") ==
        "x.toml:2:16: 'position' element 2 must be a finite number, got -inf");
  CHECK(error_of("[camera]\nlook_at = [0, 0, 5]\nposition = [0, 0, 5]\n") ==
        "x.toml:2:11: camera 'look_at' must differ from 'position'");
  CHECK(error_of("[environment]\ncolor = [1, -1, 0]\n") ==
        "x.toml:2:13: 'color' component 2 must be a number >= 0, got -1");
  CHECK(error_of("[environment]\ncolor = true\n") ==
        "x.toml:2:9: 'color': expected a colour (a number or [r, g, b]), got true");
  CHECK(error_of("[[material]]\nname = \"m\"\ntype = \"diffuse\"\nalbedo = {}\n") ==
        "x.toml:4:10: 'albedo' must be a colour (a number or [r, g, b]) or a texture name, got a table");
  CHECK(error_of("[camera]\nup = []\n") == "x.toml:2:6: 'up': expected [x, y, z] (3 numbers), got an empty array");
  CHECK(error_of("render = 5\n") == "x.toml:1:10: [render] must be a table, got 5");
  CHECK(error_of("[object]\ntype = \"sphere\"\n") ==
        "x.toml:1:1: 'object' must be an array of tables (write [[object]] sections), got a table");
}

TEST_CASE("scene parser: names of materials, textures and prototypes must exist and be unique") {
  CHECK(error_of(std::string(k_materials) + "\n[[object]]\ntype = \"sphere\"\nmaterial = \"gold\"\n") ==
        "x.toml:14:12: unknown material 'gold'; defined: red, glass");
  CHECK(error_of(std::string(k_materials) + "\n[[object]]\ntype = \"sphere\"\nmaterial = \"rde\"\n") ==
        "x.toml:14:12: unknown material 'rde'; defined: red, glass; did you mean 'red'?");
  CHECK(error_of(std::string(k_materials) + "\n[[object]]\ntype = \"sphere\"\n") ==
        "x.toml:12:1: [[object]] needs 'material' (defined: red, glass)");
  CHECK(error_of(std::string(k_materials) + "\n[[material]]\nname = \"red\"\ntype = \"mirror\"\n") ==
        "x.toml:13:8: duplicate material 'red' (first defined at x.toml:3:8)");
  CHECK(error_of("[[material]]\ntype = \"diffuse\"\nalbedo = \"wood\"\nname = \"m\"\n") ==
        "x.toml:3:10: unknown texture 'wood'; defined: none");
  CHECK(error_of("[[material]]\ntype = \"diffuse\"\n") ==
        "x.toml:1:1: [[material]] needs 'name' (a unique material name)");
  CHECK(error_of(std::string(k_materials) + "[[object]]\ntype = \"instance\"\nprototype = \"tree\"\n") ==
        "x.toml:13:13: unknown prototype 'tree'; defined: none");
  CHECK(error_of(std::string(k_materials) + "[[prototype]]\nname = \"p\"\n[[prototype.object]]\n"
                                            "type = \"instance\"\nprototype = \"p\"\n") ==
        "x.toml:14:8: a prototype cannot contain instances");
}

TEST_CASE("scene parser: unknown or missing type names the valid ones") {
  CHECK(error_of("[[object]]\ntype = \"torus\"\n") ==
        "x.toml:2:8: unknown object type 'torus'; valid types: sphere, quad, plane, box, cylinder, lathe, mesh, "
        "instance");
  CHECK(error_of("[[material]]\ntype = \"difuse\"\n") ==
        "x.toml:2:8: unknown material type 'difuse' (did you mean 'diffuse'?); valid types: diffuse, plastic, "
        "mirror, glass, metal, emissive");
  CHECK(error_of("[[light]]\nposition = [0, 1, 0]\n") ==
        "x.toml:1:1: [[light]] needs 'type': one of point, spot, directional");
}

TEST_CASE("scene parser: camera keyframes must be in range and increasing") {
  CHECK(error_of("[render]\nframes = 5\n[[camera.keyframe]]\nframe = 6\n") ==
        "x.toml:4:9: 'frame' must be an integer in 1..5, got 6");
  CHECK(error_of("[render]\nframes = 5\n[[camera.keyframe]]\nframe = 3\n[[camera.keyframe]]\nframe = 3\n") ==
        "x.toml:6:9: keyframe frames must be strictly increasing: frame 3 follows frame 3");
  CHECK(error_of("[[camera.keyframe]]\nfov = 30\n") ==
        "x.toml:1:1: [[camera.keyframe]] needs 'frame' (a frame number in 1..[render] frames)");
}

TEST_CASE("scene parser: TOML syntax errors keep their line and column") {
  CHECK(error_of("[render]\nwidth = 1\nheight = \n") ==
        "x.toml:3:10: TOML syntax error: missing value after key-value separator '=' (expected value, but got "
        "nothing)");
  std::string e = error_of("[render]\nwidth = 1\nwidth = 2\n");
  CHECK(e.rfind("x.toml:3:9: TOML syntax error: ", 0) == 0);
  CHECK_THROWS_WITH_AS(rt::parse_scene_string("a = [1,\n 2\nb = 3\n", "x.toml"), doctest::Contains("x.toml:3:1: "),
                       rt::SceneError);
}

TEST_CASE("scene parser: hostile input is an error, not a crash") {
  const std::string too_deep = ": arrays, inline tables and dotted keys nested more than 64 deep";
  CHECK(error_of("a = " + std::string(100000, '[')) == "x.toml:1:69" + too_deep);
  std::string dotted;
  for (int i = 0; i < 100000; ++i) dotted += "a.";
  CHECK(error_of(dotted + "a = 1\n") == "x.toml:1:130" + too_deep);
  CHECK(error_of("[" + dotted + "a]\n") == "x.toml:1:129" + too_deep);
  CHECK(error_of("a = " + std::string(64, '[') + std::string(64, ']') + "\n") ==
        "x.toml:1:1: unknown key 'a' in the top level; valid keys: import, render, camera, environment, texture, material, "
        "light, prototype, object");
  CHECK(error_of(std::string(9 << 20, '\n')).rfind("x.toml:1:1: scene file is too large (9437184 bytes; the limit is 8 MiB)", 0) == 0);
  CHECK(error_of("\xEF\xBB\xBF[render]\nspp = 0\n") == "x.toml:2:7: 'spp' must be an integer in 1..65536, got 0");
  CHECK(error_of("[camera]\nfov = 1e300\n") == "x.toml:2:7: 'fov' is too large for a 32-bit float, got 1e+300");
  // Not UTF-8: refused before toml11, whose error path for a bad byte in a literal string reads
  // out of bounds (heap overflow found by fuzz_cluster: the key '[\xf9\xf9...'[ below).
  const std::string not_utf8 = ": the file is not valid UTF-8 here (TOML files must be UTF-8)";
  CHECK(error_of("x = \"\xff\"\n") == "x.toml:1:6" + not_utf8);
  CHECK(error_of("'[" + std::string(84, '\xf9') + "'[") == "x.toml:1:3" + not_utf8);
  CHECK(error_of("[render]\n# caf\xc3\xa9 ok, then an overlong slash \xc0\xaf\n") == "x.toml:2:36" + not_utf8);
  CHECK(error_of("a = '\xed\xa0\x80'\n") == "x.toml:1:6" + not_utf8);     // a surrogate
  CHECK(error_of("a = '\xf4\x90\x80\x80'\n") == "x.toml:1:6" + not_utf8);  // above U+10FFFF
  CHECK(error_of("a = '\xe2\x82'\n") == "x.toml:1:6" + not_utf8);          // cut short
  // Well-formed multi-byte text still parses (and gets the usual unknown-key error).
  CHECK(error_of("[render]\n# \xe2\x82\xac \xf0\x9f\x8e\xa8\nspp = 0\n") == "x.toml:3:7: 'spp' must be an integer in 1..65536, got 0");
}

TEST_CASE("scene parser: long one-line arrays are accepted and located exactly") {
  // toml11 rescans a value's whole line; the parser breaks long arrays over lines first,
  // which must neither change the result nor the reported columns.
  std::string line = "profile = [";
  for (int i = 0; i < 2000; ++i) line += "[0.5, " + std::to_string(i) + "], ";
  std::string text = std::string(k_materials) + "[[object]]\ntype = \"lathe\"\nmaterial = \"red\"\n" + line;
  rt::SceneDesc s = rt::parse_scene_string(text + "[0, 2000]]\n", "x.toml");
  REQUIRE(s.objects.size() == 1);
  REQUIRE(s.objects[0].profile.size() == 2001);
  CHECK(s.objects[0].profile[1999].y == 1999.0f);
  const std::string column = std::to_string(line.size() + 5);  // the 'nan' in "[0, nan]"
  CHECK(error_of(text + "[0, nan]]\n") == "x.toml:14:" + column + ": 'profile' point 2001 y must be a finite number, got nan");
  CHECK(error_of(text + "[0, 1] 2]\n").rfind("x.toml:14:" + std::to_string(line.size() + 8) + ": TOML syntax error: ", 0) == 0);
  // Lines that cannot be broken are limited.
  CHECK(error_of("[render]\n# " + std::string(9000, 'x') + "\n") ==
        "x.toml:2:1: line is longer than 8192 bytes; break it up (arrays may span several lines)");
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

  // Absolute paths are used as they are.
  std::string abs_text = "[environment]\nimage = \"" + (dir / "lib2" / "tex.png").string() + "\"\n";
  CHECK(rt::parse_scene_string(abs_text, "x.toml").environment.image_path == (dir / "lib2" / "tex.png").string());
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

TEST_CASE("scene parser: a missing scene file is a SceneError") {
  CHECK_THROWS_WITH_AS(rt::parse_scene_file("/nonexistent/dir/x.toml"),
                       "cannot open scene file '/nonexistent/dir/x.toml'", rt::SceneError);
}
