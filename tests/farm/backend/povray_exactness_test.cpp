// POV-Ray features whose pixels depend on the region or the order POV-Ray renders them in
// (issue 38: "no silent wrong image"): radiosity, crand, area_light jitter, media jitter, media
// method 1 and subsurface. Rendered in blocks they gave `farm render` an image unlike `farm
// single`'s, exit 0; now the scan finds them (file:line:column) and each frame is rendered whole by
// one single-threaded povray, in the farm and in `farm single`, so the images are byte-identical
// and an animation's frames still spread over the workers. Each scene is first shown to be hostile:
// a region rendered alone differs from the same pixels of the full frame. Skips, saying so,
// without povray.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "backend/povray_renderer.h"
#include "backend/povray_scene.h"
#include "farm/backend_scenes.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

using backend_scenes::have_program;

const char* const k_stage =
    "#version 3.7;\n"
    "camera { location <0, 2, -5> look_at <0, 0.5, 0> }\n"
    "plane { y, 0 pigment { checker rgb 1 rgb 0.2 } }\n"
    "sphere { <0, 1, 0>, 1 pigment { rgb <0.8, 0.3, 0.2> } finish { specular 0.5 } }\n"
    "box { <-2.5, 0, 1>, <-1.5, 2, 2> pigment { rgb <0.2, 0.6, 0.9> } }\n";

struct Hostile {
  const char* name;
  std::string text;     // the scene after k_stage (which is 5 lines long)
  const char* located;  // the scan's report: "NAME.pov:LINE:COLUMN: ..."
};

std::vector<Hostile> hostile_scenes() {
  const std::string light = "light_source { <3, 5, -3> rgb 1 }\n";
  const std::string ball = "sphere { <1.5, 1, -1>, 1 pigment { rgbt 1 } hollow interior { media { scattering { 1, 0.5 } ";
  return {
      {"radiosity", "global_settings { radiosity { count 50 } }\n" + light,
       "radiosity.pov:6:19: radiosity: its pretrace and samples follow the region POV-Ray renders"},
      {"area_jitter", "light_source { <3, 5, -3> rgb 1 area_light <1, 0, 0>, <0, 0, 1>, 4, 4 adaptive 1 jitter }\n",
       "area_jitter.pov:6:82: jitter in an area light"},
      {"media_jitter", light + ball + "method 3 intervals 1 samples 5 jitter 0.5 } } }\n",
       "media_jitter.pov:7:124: jitter in a media"},
      {"media_method1", light + ball + "method 1 intervals 3 samples 3, 5 } } }\n",
       "media_method1.pov:7:93: media method 1"},
      {"crand", light + "sphere { <1.5, 1, -1>, 0.8 pigment { rgb 0.7 } finish { crand 0.3 } }\n",
       "crand.pov:7:57: crand (random graininess)"},
      {"subsurface",
       "global_settings { subsurface { samples 50, 20 } mm_per_unit 10 }\n" + light +
           "sphere { <1.5, 1, -1>, 0.8 pigment { rgb 0.9 } finish { subsurface { translucency <1, 0.5, 0.2> } } }\n",
       "subsurface.pov:8:57: subsurface light transport"},
  };
}

std::vector<float> render_region(const std::string& scene, int x, int y, int w, int h, int width, int height) {
  farm::PovraySettings s;
  s.scene_path = scene;
  s.width = width;
  s.height = height;
  std::vector<float> rgba(static_cast<size_t>(w) * h * 4);
  farm::povray_render(s, 1, x, y, w, h, rgba.data());
  return rgba;
}

}  // namespace

TEST_CASE("povray exactness: the scan locates each feature whose pixels depend on the region, and only those" *
          doctest::test_suite("unit")) {
  const fs::path dir = test_paths::temp_dir("povray_exact_scan");
  for (const Hostile& h : hostile_scenes()) {
    CAPTURE(h.name);
    std::ofstream(dir / (std::string(h.name) + ".pov")) << k_stage << h.text;
    const farm::PovraySceneFiles found = farm::povray_scene_files((dir / (std::string(h.name) + ".pov")).string(), {});
    REQUIRE(found.whole_frame.size() == 1);
    CHECK_MESSAGE(found.whole_frame[0].find(h.located) != std::string::npos, found.whole_frame[0]);
    CHECK(found.whole_frame[0].rfind((dir / h.name).string(), 0) == 0);  // the path the scene was given
  }
  // Measured exact in blocks: area lights without jitter, photons (their jitter too), media
  // methods 2 and 3 without jitter (or jitter 0), focal blur, crand 0, an object's no_radiosity,
  // and a global subsurface block without any finish using it. Names in comments and strings
  // are not features.
  std::ofstream(dir / "exact.pov")
      << k_stage << "global_settings { photons { count 1000 jitter 0.4 } subsurface { samples 5, 5 } }\n"
      << "light_source { <3, 5, -3> rgb 1 area_light <1, 0, 0>, <0, 0, 1>, 4, 4 adaptive 1 photons { reflection on } }\n"
      << "sphere { 0, 1 hollow interior { media { scattering { 1, 0.5 } method 2 } } no_radiosity }\n"
      << "sphere { 0, 1 hollow interior { media { scattering { 1, 0.5 } method 3 jitter 0 } } }\n"
      << "sphere { 0, 1 finish { crand 0 } }  // crand 0.3, radiosity { }\n"
      << "#declare S = \"jitter crand\";\n";
  const farm::PovraySceneFiles exact = farm::povray_scene_files((dir / "exact.pov").string(), {});
  CHECK_MESSAGE(exact.whole_frame.empty(), (exact.whole_frame.empty() ? "" : exact.whole_frame[0]));
  // Each feature is reported at its first use, also when an included file holds it.
  std::ofstream(dir / "grain.inc") << "#declare F = finish { crand 0.05 }\n#declare G = finish { crand 0.1 }\n";
  std::ofstream(dir / "grain.pov") << "#include \"grain.inc\"\nsphere { 0, 1 finish { crand 0.2 } }\n";
  const farm::PovraySceneFiles grain = farm::povray_scene_files((dir / "grain.pov").string(), {dir.string()});
  REQUIRE(grain.whole_frame.size() == 1);
  CHECK_MESSAGE(grain.whole_frame[0].find("grain.inc:1:23: crand") != std::string::npos, grain.whole_frame[0]);
  CHECK(grain.warnings.empty());
  fs::remove_all(dir);
}

TEST_CASE("povray exactness: a feature in POV-Ray's library counts when the scene uses the declaration holding it" *
          doctest::test_suite("unit")) {
  // The line numbers below are Debian's POV-Ray 3.7 include files'.
  const std::string include = "/usr/share/povray-3.7/include";
  const std::vector<std::string> library = farm::povray_library_dirs();
  if (std::find(library.begin(), library.end(), include) == library.end() || !fs::exists(include + "/textures.inc") ||
      !fs::exists(include + "/stones1.inc")) {
    MESSAGE("skipped: needs Debian's povray (textures.inc and stones1.inc in its library folder " << include << ")");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_exact_library");
  // textures.inc declares EMBWood1 with crand; a scene that includes it but uses other textures
  // renders in blocks.
  std::ofstream(dir / "plain.pov") << "#include \"textures.inc\"\nsphere { 0, 1 texture { Jade } }\n";
  CHECK(farm::povray_scene_files((dir / "plain.pov").string(), {}).whole_frame.empty());
  std::ofstream(dir / "wood.pov") << "#include \"textures.inc\"\nsphere { 0, 1 texture { EMBWood1 } }\n";
  const farm::PovraySceneFiles wood = farm::povray_scene_files((dir / "wood.pov").string(), {});
  REQUIRE(wood.whole_frame.size() == 1);
  CHECK_MESSAGE(wood.whole_frame[0].find("textures.inc:595:9: crand (random graininess)") != std::string::npos, wood.whole_frame[0]);
  CHECK_MESSAGE(wood.whole_frame[0].find("(in POV-Ray's library, used through 'EMBWood1')") != std::string::npos, wood.whole_frame[0]);
  // stones.inc includes stones1.inc, whose T_Stone6 layers T_Grnt19, declared with crand;
  // T_Stone1's granites have none.
  std::ofstream(dir / "stone1.pov") << "#include \"stones.inc\"\nbox { 0, 1 texture { T_Stone1 } }\n";
  CHECK(farm::povray_scene_files((dir / "stone1.pov").string(), {}).whole_frame.empty());
  std::ofstream(dir / "stone6.pov") << "#include \"stones.inc\"\nbox { 0, 1 texture { T_Stone6 } }\n";
  const farm::PovraySceneFiles stone = farm::povray_scene_files((dir / "stone6.pov").string(), {});
  REQUIRE(stone.whole_frame.size() == 1);
  CHECK_MESSAGE(stone.whole_frame[0].find("stones1.inc:584:3: crand (random graininess)") != std::string::npos,
                stone.whole_frame[0]);
  CHECK_MESSAGE(stone.whole_frame[0].find("used through 'T_Grnt19'") != std::string::npos, stone.whole_frame[0]);
  fs::remove_all(dir);
}

TEST_CASE("povray exactness: scenes whose blocks differ from the full frame give farm single's image, a frame per block") {
  if (!have_program("povray")) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_exact_render");
  const std::vector<std::string> size = {"--width", "64", "--height", "48"};
  for (const Hostile& h : hostile_scenes()) {
    CAPTURE(h.name);
    const std::string scene = (dir / (std::string(h.name) + ".pov")).string();
    std::ofstream(scene) << k_stage << h.text;
    // Hostile: a 32x32 region rendered alone is not the full frame's (what blocks gave before).
    const std::vector<float> full = render_region(scene, 0, 0, 64, 48, 64, 48);
    const std::vector<float> region = render_region(scene, 32, 16, 32, 32, 64, 48);
    int differ = 0;
    for (int j = 0; j < 32; ++j) {
      for (int i = 0; i < 32 * 4; ++i) differ += region[j * 32 * 4 + i] != full[((16 + j) * 64 + 32) * 4 + i];
    }
    CHECK(differ > 0);

    const std::string single = (dir / (std::string(h.name) + "_single.png")).string();
    const std::string render = (dir / (std::string(h.name) + "_render.png")).string();
    std::vector<std::string> s = {k_farm, "single", scene, "-o", single};
    s.insert(s.end(), size.begin(), size.end());
    const std::string single_log = (dir / (std::string(h.name) + "_single.log")).string();
    REQUIRE(test_process::run(s, single_log, 120) == 0);
    std::vector<std::string> r = {k_farm, "render", scene, "-o", render, "--workers", "2", "--block", "8", "--wait", "0.05"};
    r.insert(r.end(), size.begin(), size.end());
    const std::string render_log = (dir / (std::string(h.name) + "_render.log")).string();
    REQUIRE(test_process::run(r, render_log, 120) == 0);
    CHECK(test_process::same_file(single, render));
    // Both say why, where: the frame is one block (a --block is overruled), single uses one thread.
    for (const std::string& log : {launched_workers::read_text(single_log), launched_workers::read_text(render_log)}) {
      CHECK_MESSAGE(log.find("each frame is rendered whole, as one block, by one povray on one thread") != std::string::npos, log);
      CHECK_MESSAGE(log.find(h.located) != std::string::npos, log);
    }
    const std::string log = launched_workers::read_text(render_log);
    CHECK_MESSAGE(log.find("(64x48, 1 frame(s), 1 blocks of 64, policy fixed)") != std::string::npos, log);
  }
  fs::remove_all(dir);
}

TEST_CASE("povray exactness: an animation with radiosity spreads its frames over the workers, each farm single's") {
  if (!have_program("povray")) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_exact_animation");
  const std::string scene = (dir / "rad.pov").string();
  std::ofstream(scene) << k_stage << "global_settings { radiosity { count 50 } }\n"
                       << "light_source { <3 * cos(clock * 3), 5, -3> rgb 1 }\n";
  const std::vector<std::string> look = {"--width", "48", "--height", "32", "--renderer-options", "+KFI1 +KFF3"};
  auto farm = [&](std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), k_farm);
    args.insert(args.end(), look.begin(), look.end());
    return test_process::run(args, (dir / log).string(), 120);
  };
  REQUIRE(farm({"single", scene, "-o", (dir / "single.png").string()}, "single.log") == 0);
  REQUIRE(farm({"render", scene, "-o", (dir / "render.png").string(), "--workers", "2", "--policy", "seed"}, "render.log") == 0);
  for (const char* frame : {"_0001.png", "_0002.png", "_0003.png"}) {
    CAPTURE(frame);
    CHECK(test_process::same_file((dir / (std::string("single") + frame)).string(), (dir / (std::string("render") + frame)).string()));
  }
  // A chosen policy keeps its name; the blocks are still whole frames, one per frame.
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  CHECK_MESSAGE(log.find("(48x32, 3 frame(s), 3 blocks of 48, policy seed)") != std::string::npos, log);
  fs::remove_all(dir);
}

TEST_CASE("povray exactness: a frame too large for one block is refused by farm single and farm render alike") {
  const fs::path dir = test_paths::temp_dir("povray_exact_large");
  const std::string scene = (dir / "big.pov").string();
  std::ofstream(scene) << k_stage << "global_settings { radiosity { } }\n";
  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    test_process::Child c({k_farm, command, scene, "-o", (dir / "big.png").string(), "--width", "4100", "--height", "16"},
                          (dir / (std::string(command) + ".log")).string());
    CHECK(c.wait(30) == 2);
    CHECK_MESSAGE(c.log().find("big.pov:6:19: radiosity: its pretrace and samples follow the region POV-Ray renders: such a "
                               "scene's frames are rendered whole, one block each, and a block is at most 4096 pixels a "
                               "side; this image is 4100x16") != std::string::npos,
                  c.log());
  }
  CHECK_FALSE(fs::exists(dir / "big.png"));
  fs::remove_all(dir);
}

TEST_SUITE_END();
