// Blender settings whose pixels a block cannot hold as the full frame would (issue 38: "no silent
// wrong image"): the render stamp burnt into the image (a banner per block, with the file's path
// and the clock) and Freestyle (lines drawn per rendered region, broken at block edges). Through
// the farm they gave an image unlike `farm single`'s, exit 0; now `farm single` and `farm render`
// both refuse the stamp with exit 2 before rendering, naming the scene and the setting, and render
// a Freestyle scene a whole frame per block (repeatable: one thread or two). Each .blend is
// made here by Blender (tools/blender/make_test_scene.py, then the setting switched on), and is
// first shown to be hostile: a region rendered alone differs from the full frame's pixels. Skips,
// saying so, without Debian's blender.
#include <doctest/doctest.h>

#include "backend/blender_process.h"
#include "backend/blender_renderer.h"
#include "farm/backend_scenes.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

using backend_scenes::have_program;
using backend_scenes::make_blender_scene;

// The test scene with one setting changed by `python` (on `s`, the scene), saved beside it as NAME.blend.
std::string variant(const fs::path& dir, const std::string& base, const std::string& name, const std::string& python) {
  const std::string out = (dir / (name + ".blend")).string();
  REQUIRE(test_process::run({"/usr/bin/env", "blender", "-b", "--factory-startup", base, "--python-expr",
                             "import bpy\ns = bpy.context.scene\n" + python +
                                 "\nbpy.ops.wm.save_as_mainfile(filepath='" + out + "')\n"},
                            (dir / (name + "_make.log")).string(), 120) == 0);
  return out;
}

// How many values of the region (x, y, w, h) rendered alone differ from the full frame's.
int region_differs(const std::string& scene, int width, int height, int x, int y, int w, int h) {
  farm::BlenderSettings s;
  s.scene_path = scene;
  s.width = width;
  s.height = height;
  s.samples = 2;
  std::unique_ptr<farm::BlenderProcess> blender = farm::start_blender(s);
  std::vector<float> full(static_cast<size_t>(width) * height * 4), region(static_cast<size_t>(w) * h * 4);
  farm::blender_render(*blender, s, 1, 0, 0, width, height, full.data());
  farm::blender_render(*blender, s, 1, x, y, w, h, region.data());
  int differ = 0;
  for (int j = 0; j < h; ++j) {
    for (int i = 0; i < w * 4; ++i) differ += region[j * w * 4 + i] != full[((y + j) * width + x) * 4 + i];
  }
  return differ;
}

}  // namespace

TEST_CASE("blender exactness: Burn Into Image is refused by farm single and farm render, exit 2, and Freestyle renders "
          "whole frames, single's image") {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_exact");
  const std::string base = make_blender_scene(dir, 32, 24, 2);
  const std::string stamp = variant(dir, base, "stamp", "s.render.use_stamp = True");
  const std::string freestyle = variant(dir, base, "freestyle", "s.render.use_freestyle = True\ns.render.line_thickness = 2");
  // Hostile: the top right quarter rendered alone is not the full frame's (blocks gave this, exit 0).
  CHECK(region_differs(stamp, 32, 24, 16, 0, 16, 12) > 0);
  CHECK(region_differs(freestyle, 32, 24, 16, 0, 16, 12) > 0);

  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    const std::string out = (dir / (std::string("stamp_") + command + ".exr")).string();
    test_process::Child farm({k_farm, command, stamp, "-o", out}, (dir / (std::string("stamp_") + command + ".log")).string());
    CHECK(farm.wait(120) == 2);
    CHECK_MESSAGE(farm.log().find("stamp.blend: scene 'Scene': Output > Metadata > Burn Into Image is on: Blender would "
                                  "burn its banner (with the file's path and the render's date and time) into every "
                                  "block, so the farm's image would differ from a single render's; turn Burn Into Image "
                                  "off") != std::string::npos,
                  farm.log());
    CHECK_FALSE(fs::exists(out));
  }

  // Freestyle: one block per frame (a --block is overruled), the frames spread over the workers.
  const std::string single = (dir / "freestyle_single.exr").string(), render = (dir / "freestyle_render.exr").string();
  REQUIRE(test_process::run({k_farm, "single", freestyle, "-o", single}, (dir / "freestyle_single.log").string(), 120) == 0);
  REQUIRE(test_process::run({k_farm, "render", freestyle, "-o", render, "--workers", "2", "--block", "8"},
                            (dir / "freestyle_render.log").string(), 240) == 0);
  for (const char* frame : {"_0001.exr", "_0002.exr"}) {
    CAPTURE(frame);
    CHECK(test_process::same_file((dir / (std::string("freestyle_single") + frame)).string(),
                                  (dir / (std::string("freestyle_render") + frame)).string()));
  }
  for (const char* log : {"freestyle_single.log", "freestyle_render.log"}) {
    const std::string text = launched_workers::read_text((dir / log).string());
    CHECK_MESSAGE(text.find("each frame is rendered whole, as one block, by one Blender on one thread") != std::string::npos, text);
    CHECK_MESSAGE(text.find("freestyle.blend: scene 'Scene': Render > Freestyle is on: Freestyle draws its lines within "
                            "the region rendered, so in blocks they would break at every block's edge") != std::string::npos,
                  text);
  }
  CHECK(launched_workers::read_text((dir / "freestyle_render.log").string()).find("(32x24, 2 frame(s), 2 blocks of 32") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_SUITE_END();
