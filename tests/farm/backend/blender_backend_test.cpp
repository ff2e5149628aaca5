// The Blender backend (issue 27): a .blend that Blender itself makes here (a textured plane whose
// image file sits beside it, a glossy cube, two lights, a camera; tools/blender/make_test_scene.py)
// rendered block by block through the farm is byte-identical to `farm single` of it, whose pixels
// are `blender -b -f` run by hand; the image file travels, and a file the .blend reads that is not
// there fails at submission, naming it. Skips, saying so, without Debian's blender.
#include <doctest/doctest.h>

#include <OpenImageIO/imageio.h>

#include "backend/blender_renderer.h"
#include "farm/backend_scenes.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

using backend_scenes::have_program;
using backend_scenes::make_blender_scene;

// The first three channels of an image, as floats (8-bit images give their bytes / 255).
std::vector<float> rgb_of(const std::string& path) {
  auto in = OIIO::ImageInput::open(path);
  REQUIRE_MESSAGE(in, path);
  const OIIO::ImageSpec& spec = in->spec();
  REQUIRE(spec.nchannels >= 3);
  std::vector<float> px(static_cast<size_t>(spec.width) * spec.height * spec.nchannels);
  REQUIRE(in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::FLOAT, px.data()));
  std::vector<float> rgb;
  for (size_t i = 0; i < px.size(); i += spec.nchannels) rgb.insert(rgb.end(), px.begin() + i, px.begin() + i + 3);
  return rgb;
}

// Blender run by hand on frame `frame`, its output in `format` (OPEN_EXR, PNG): the file it wrote.
std::string blender_by_hand(const fs::path& dir, const std::string& scene, int frame, const std::string& format) {
  const std::string stem = (dir / ("hand_" + format + "_")).string();
  REQUIRE(test_process::run({"/usr/bin/env", "blender", "-b", scene, "-o", stem + "#", "-F", format, "-f", std::to_string(frame)},
                            (dir / "hand.log").string(), 120) == 0);
  return stem + std::to_string(frame) + (format == "PNG" ? ".png" : ".exr");
}

}  // namespace

TEST_CASE("blender: a .blend through the farm equals farm single, which equals blender -b -f by hand" * doctest::test_suite("slow")) {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_scene");
  const std::string scene = make_blender_scene(dir, 48, 36, 4);
  auto farm = [&](std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), k_farm);
    return test_process::run(args, (dir / log).string(), 240);
  };
  for (const std::string ext : {"exr", "png"}) {
    CAPTURE(ext);
    const std::string single = (dir / ("single." + ext)).string(), render = (dir / ("render." + ext)).string();
    REQUIRE(farm({"single", scene, "-o", single, "--threads", "1", "--frame", "2"}, "single.log") == 0);
    // Blocks of 16 halved where a worker is slow: border regions of every size and place.
    REQUIRE(farm({"render", scene, "-o", render, "--frame", "2", "--workers", "2", "--block", "16", "--wait", "0.05"},
                 "render.log") == 0);
    CHECK(test_process::same_file(single, render));
    const std::string hand = blender_by_hand(dir, scene, 2, ext == "exr" ? "OPEN_EXR" : "PNG");
    CHECK(rgb_of(hand) == rgb_of(single));
  }
  fs::remove_all(dir);
}

TEST_CASE("blender: the image a .blend reads travels to the workers, and one that is not there is refused by name") {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_files");
  const std::string scene = make_blender_scene(dir, 24, 16, 2);
  const std::string out = (dir / "out.png").string();
  // The workers read only their job folder: the checker must have travelled for the images to match.
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", (dir / "single.png").string()}, (dir / "s.log").string(), 120) == 0);
  REQUIRE(test_process::run({k_farm, "render", scene, "-o", out, "--workers", "1"},
                            (dir / "r.log").string(), 120) == 0);
  // The .blend's two frames (its cube turns): out_0001.png, out_0002.png, each as farm single's.
  for (const char* frame : {"_0001.png", "_0002.png"}) {
    CAPTURE(frame);
    CHECK(test_process::same_file((dir / (std::string("single") + frame)).string(), (dir / (std::string("out") + frame)).string()));
  }
  CHECK_FALSE(test_process::same_file((dir / "out_0001.png").string(), (dir / "out_0002.png").string()));

  fs::remove(dir / "checker.png");
  test_process::Child bad({k_farm, "render", scene, "-o", out}, (dir / "bad.log").string());
  CHECK(bad.wait(60) == 2);
  CHECK_MESSAGE(bad.log().find("image 'checker' reads '//checker.png', which is not there") != std::string::npos, bad.log());
  // Not a .blend at all: Blender's own words, exit 2.
  std::ofstream(dir / "junk.blend") << "not a blend file";
  test_process::Child junk({k_farm, "single", (dir / "junk.blend").string(), "-o", out}, (dir / "junk.log").string());
  CHECK(junk.wait(60) == 2);
  CHECK_MESSAGE(junk.log().find("junk.blend") != std::string::npos, junk.log());
  fs::remove_all(dir);
}

TEST_CASE("blender: the options a job carries") {
  farm::BlenderJobOptions o;
  o.pixels = farm::BlenderPixels::display8;
  o.frame_start = 10;
  o.frame_step = 3;
  const std::vector<std::string> words = farm::blender_option_words(o);
  const farm::BlenderJobOptions back = farm::parse_blender_options(words);
  CHECK(back.pixels == farm::BlenderPixels::display8);
  CHECK(back.frame_start == 10);
  CHECK(back.frame_step == 3);
  for (const char* refused : {"pixels=hdr", "frame_step=0", "frame_start=1x", "threads=4", "--python-expr=x", ""}) {
    CAPTURE(refused);
    CHECK_THROWS_AS(farm::parse_blender_options({refused}), std::invalid_argument);
  }
}

TEST_CASE("blender: a .blend's samples and frames past the farm's limits are refused at submission, as in a TOML scene") {
  if (!have_program("blender")) {
    // Said to CTest as a skip (labeled_tests.cmake), never counted as passed.
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_limits");
  // 100000 samples: `farm single` rendered it (for hours), `farm render` waited at 0% for ever
  // (every worker dropped the Welcome past the protocol's 65536, and the master never learnt why).
  const std::string scene = make_blender_scene(dir, 32, 24, 100000);
  const std::string samples = "scene.blend: 'spp' must be an integer in 1..65536, got 100000";
  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    test_process::Child run({k_farm, command, scene, "-o", (dir / "out.png").string()}, (dir / (std::string(command) + ".log")).string());
    CHECK(run.wait(120) == 2);
    CHECK_MESSAGE(run.log().find(samples) != std::string::npos, run.log());
    CHECK_FALSE(fs::exists(dir / "out_0001.png"));
  }
  // The same value in a TOML scene, in the same words.
  std::ofstream(dir / "scene.toml") << "[render]\nspp = 100000\n";
  test_process::Child toml({k_farm, "single", (dir / "scene.toml").string(), "-o", (dir / "t.png").string()},
                           (dir / "toml.log").string());
  CHECK(toml.wait(60) == 2);
  CHECK_MESSAGE(toml.log().find("'spp' must be an integer in 1..65536, got 100000") != std::string::npos, toml.log());
  // --spp within the limit overrides the .blend's.
  CHECK(test_process::run({k_farm, "single", scene, "-o", (dir / "ok.png").string(), "--spp", "1", "--frame", "1"},
                          (dir / "ok.log").string(), 120) == 0);

  // Blender's last frame: the master probed every frame's output name for minutes, deaf to SIGTERM.
  REQUIRE(test_process::run({"/usr/bin/env", "blender", "-b", scene, "--python-expr",
                             "import bpy; bpy.context.scene.frame_end = 1048574; bpy.ops.wm.save_mainfile()"},
                            (dir / "frames.log").string(), 120) == 0);
  const auto t0 = std::chrono::steady_clock::now();
  test_process::Child many({k_farm, "render", scene, "-o", (dir / "many.png").string(), "--spp", "1"}, (dir / "many.log").string());
  CHECK(many.wait(120) == 2);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60));
  CHECK_MESSAGE(many.log().find("scene.blend: 'frames' must be an integer in 1..100000, got 1048574 (the .blend's frames "
                                "1..1048574 step 1") != std::string::npos,
                many.log());
  fs::remove_all(dir);
}

TEST_SUITE_END();
