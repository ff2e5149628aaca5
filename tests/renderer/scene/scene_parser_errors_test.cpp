// Scene file parsing of mistakes: the exact located message (file:line:column) for each class of
// mistake, hostile input, and a missing file. Valid scenes are in scene_parser_test.cpp.
#include <doctest/doctest.h>

#include <string>

#include "scene/scene_desc.h"
#include "scene_parser_fixture.h"

TEST_SUITE_BEGIN("unit");

namespace {

using scene_parser_fixture::k_materials;

// The SceneError message for `text` parsed as "x.toml", or "(no error)".
std::string error_of(const std::string& text, const rt::AssetSearch& search = {}) {
  try {
    rt::parse_scene_string(text, "x.toml", search);
  } catch (const rt::SceneError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("scene parser: source locations print as file:line:column") {
  CHECK(rt::SourceLoc{"a.toml", 3, 7}.str() == "a.toml:3:7");
  CHECK(rt::SourceLoc{"a.toml", 0, 0}.str() == "a.toml");
}

TEST_CASE("scene parser: unknown keys are errors with the nearest valid key") {
  CHECK(error_of("[render]\nwidht = 5\n") == "x.toml:2:1: unknown key 'widht' in [render]; did you mean 'width'?");
  CHECK(error_of("[render]\n  spp = 4\n  zzzzzz = 1\n") ==
        "x.toml:3:3: unknown key 'zzzzzz' in [render]; valid keys: width, height, spp, integrator, max_depth, "
        "seed, frames, ambient, max_sample_value, filter, filter_width, noise_threshold, min_samples, passes");
  CHECK(error_of("[render]\nnoise_threshold = 2\n").find("'noise_threshold'") != std::string::npos);
  CHECK(error_of("[render]\nmin_samples = -1\n").find("'min_samples'") != std::string::npos);
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

TEST_CASE("scene parser: a missing scene file is a SceneError") {
  CHECK_THROWS_WITH_AS(rt::parse_scene_file("/nonexistent/dir/x.toml"),
                       "cannot open scene file '/nonexistent/dir/x.toml': No such file or directory", rt::SceneError);
}

TEST_SUITE_END();
