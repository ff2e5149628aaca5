// The POV-Ray backend (issue 27): a .pov scene rendered block by block by Debian's povray
// through the farm is byte-identical to `farm single` of it, whose pixels are `povray`'s own
// full-frame render with the same switches; what the scene names travels, and a file it names
// that is nowhere fails at submission, naming it. Skips, saying so, without povray or chess2.pov.
#include <doctest/doctest.h>

#include <OpenImageIO/imageio.h>
#include <httplib.h>

#include <fstream>
#include <regex>
#include <thread>

#include "backend/povray_renderer.h"
#include "backend/povray_scene.h"
#include "job/job_spec.h"
#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

const std::string k_chess2 = "/usr/share/doc/povray/examples/advanced/chess2.pov";

bool have_povray() { return test_process::run({"/bin/sh", "-c", "command -v povray"}, "/dev/null") == 0; }

std::vector<uint8_t> pixels_of(const std::string& path) {
  auto in = OIIO::ImageInput::open(path);
  REQUIRE_MESSAGE(in, path);
  const OIIO::ImageSpec& spec = in->spec();
  std::vector<uint8_t> px(static_cast<size_t>(spec.width) * spec.height * spec.nchannels);
  REQUIRE(in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::UINT8, px.data()));
  return px;
}

}  // namespace

TEST_CASE("povray: chess2.pov through the farm equals farm single, which equals povray's own render" * doctest::test_suite("slow")) {
  if (!have_povray() || !fs::exists(k_chess2)) {
    MESSAGE("skipped: needs Debian's povray and povray-examples (" << k_chess2 << ")");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_chess2");
  fs::copy_file(k_chess2, dir / "chess2.pov");
  const std::string scene = (dir / "chess2.pov").string();
  const std::vector<std::string> look = {"--width", "48", "--height", "36", "--renderer-options", "+A0.3"};
  auto farm = [&](std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), k_farm);
    args.insert(args.end(), look.begin(), look.end());
    return test_process::run(args, (dir / log).string(), 240);
  };
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  REQUIRE(farm({"single", scene, "-o", single, "--threads", "1"}, "single.log") == 0);
  // Blocks on POV-Ray's own 32-pixel grid (a --block below it is rounded up to it).
  REQUIRE(farm({"render", scene, "-o", render, "--workers", "2", "--block", "8", "--wait", "0.05"}, "render.log") == 0);
  CHECK(test_process::same_file(single, render));
  // No --policy: a POV-Ray job's own default, fixed blocks (here the --block given, on the grid).
  const std::string render_log = launched_workers::read_text((dir / "render.log").string());
  CHECK_MESSAGE(render_log.find("a POV-Ray job: policy fixed (") != std::string::npos, render_log);
  CHECK_MESSAGE(render_log.find("(48x36, 1 frame(s), 4 blocks of 32, policy fixed)") != std::string::npos, render_log);
  // A plain povray run by hand (its default +BS32): the same pixels.
  const std::string hand = (dir / "hand.png").string();
  REQUIRE(test_process::run({"/bin/sh", "-c",
                             "cd '" + dir.string() + "' && povray +Ichess2.pov +Ohand.png +FN8 +W48 +H36 +A0.3 -D -V"},
                            (dir / "hand.log").string(), 240) == 0);
  CHECK(pixels_of(hand) == pixels_of(single));
  // A finer grid of the job's own (+BS8): blocks of 16 halved to 8x8 where a worker is slow, and
  // the image is still single's with the same switches (and differs from the +BS32 one).
  const std::vector<std::string> fine = {"--renderer-options", "+A0.3 +BS8"};
  std::vector<std::string> single8 = {k_farm, "single", scene, "-o", (dir / "single8.png").string(), "--width", "48",
                                      "--height", "36"};
  single8.insert(single8.end(), fine.begin(), fine.end());
  REQUIRE(test_process::run(single8, (dir / "single8.log").string(), 240) == 0);
  std::vector<std::string> render8 = {k_farm, "render", scene, "-o", (dir / "render8.png").string(), "--width", "48",
                                      "--height", "36", "--workers", "2", "--policy", "seed", "--block", "16",
                                      "--wait", "0.05"};
  render8.insert(render8.end(), fine.begin(), fine.end());
  REQUIRE(test_process::run(render8, (dir / "render8.log").string(), 240) == 0);
  CHECK(test_process::same_file((dir / "single8.png").string(), (dir / "render8.png").string()));
  CHECK_FALSE(pixels_of((dir / "single8.png").string()) == pixels_of(single));
  fs::remove_all(dir);
}

TEST_CASE("povray: a scene's own include travels to the workers, and a file it names that is nowhere is refused") {
  if (!have_povray()) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_files");
  std::ofstream(dir / "look.inc") << "#declare Tint = rgb <1, 0.4, 0.1>;\n";
  std::ofstream(dir / "ball.pov") << "#include \"colors.inc\"  // POV-Ray's own\n#include \"look.inc\"\n"
                                  << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> White }\n"
                                  << "sphere { 0, 1 pigment { color Tint } }\n";
  const std::string scene = (dir / "ball.pov").string();
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  const std::string cache = (dir / "cache").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--width", "24", "--height", "16"}, (dir / "s.log").string()) == 0);
  REQUIRE(test_process::run({k_farm, "render", scene, "-o", render, "--width", "24", "--height", "16", "--workers", "1"},
                            (dir / "r.log").string(), 120) == 0);
  CHECK(test_process::same_file(single, render));

  std::ofstream(dir / "ball.pov", std::ios::app) << "sphere { 0, 0.5 pigment { image_map { png \"missing.png\" } } }\n";
  test_process::Child bad({k_farm, "render", scene, "-o", render, "--width", "24", "--height", "16"}, (dir / "bad.log").string());
  CHECK(bad.wait(30) == 2);
  CHECK_MESSAGE(bad.log().find("ball.pov:6:43: png file 'missing.png' not found in the scene's folder, the asset folders or "
                               "POV-Ray's include folders") != std::string::npos,
                bad.log());
  // POV-Ray's own parse errors are the scene's: exit 2 with its message, from single and render.
  std::ofstream(dir / "ball.pov") << "camera { location <0, 0, -3> look_at 0 }\nsphere { 0, 1 pigment { colr rgb 1 } }\n";
  test_process::Child parse({k_farm, "render", scene, "-o", render, "--width", "24", "--height", "16", "--workers", "1"},
                            (dir / "parse.log").string());
  CHECK(parse.wait(60) == 2);
  CHECK_MESSAGE(parse.log().find("Parse Error") != std::string::npos, parse.log());
  fs::remove_all(dir);
}

TEST_CASE("povray: the switches a job may carry, and the files a scene names" * doctest::test_suite("unit")) {
  // Only the look of the image: size, region, output, display and threads are the farm's.
  CHECK(farm::povray_options(" +A0.3  +AM2 -J +R3 +Q9 +BS32 Declare=Ball=2 ") ==
        std::vector<std::string>{"+A0.3", "+AM2", "-J", "+R3", "+Q9", "+BS32", "Declare=Ball=2"});
  for (const char* refused : {"+W10", "+H10", "+SR1", "+O/tmp/x.png", "+Iother.pov", "+D", "+WT8", "+SF3", "+KFF", "+KFI1.5", "+BS2", "+A0.3x",
                              "Output_File_Name=x", "+FE"}) {
    CAPTURE(refused);
    CHECK_THROWS_AS(farm::povray_options(refused), std::invalid_argument);
  }
  CHECK(farm::povray_grid({"+A0.3"}) == farm::k_povray_grid);
  // The default block: the largest of 128, 64, 32 giving at least 48 blocks (never below the grid).
  CHECK(farm::povray_default_block(960, 720, 32) == 128);  // 48 blocks: measured best there
  CHECK(farm::povray_default_block(640, 480, 32) == 64);   // 128 would give 20
  CHECK(farm::povray_default_block(320, 240, 32) == 32);   // measured best on paper6 and hetero4
  CHECK(farm::povray_default_block(64, 48, 32) == 32);     // nothing gives 48: the smallest
  CHECK(farm::povray_default_block(320, 240, 64) == 64);   // a job's +BS64 grid is the floor
  CHECK(farm::povray_grid({"+A0.3", "+BS32"}) == 32);

  // Comments (nested block comments too) and strings that are not file names are skipped.
  const fs::path dir = test_paths::temp_dir("povray_scan");
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "a.inc") << "#include \"sub/b.inc\"\n";
  std::ofstream(dir / "sub" / "b.inc") << "#declare T = texture { pigment { image_map { png \"tex.png\" } } }\n";
  std::ofstream(dir / "tex.png") << "not read, only listed";
  std::ofstream(dir / "s.pov") << "// #include \"nothere.inc\"\n/* outer /* inner */ #include \"nor.inc\" */\n"
                               << "#declare Name = \"text.png\";\n#include \"colors.inc\"\n#include \"a.inc\"\n"
                               << "#include \"a.inc\"  // once\n";
  const std::vector<std::string> files = farm::povray_scene_files((dir / "s.pov").string(), {dir.string()}).files;
  // b.inc names tex.png relative to the scene's folder (POV-Ray's current folder), not its own:
  // a sub/tex.png is not what POV-Ray would read.
  std::ofstream(dir / "sub" / "tex.png") << "a decoy";
  CHECK(files == std::vector<std::string>{(dir / "a.inc").string(), (dir / "sub" / "b.inc").string(), (dir / "tex.png").string()});

  // A missing file inside a conditional block (desk.pov's desk3.png, read for clock=4 only) or
  // in a file included there is reported, not refused; outside one, and after its #end, refused.
  std::ofstream(dir / "cond.inc") << "#declare P = pigment { image_map { png \"late.png\" } }\n";
  std::ofstream(dir / "c.pov") << "#switch (clock)\n#case (4)\n  #declare P = pigment { image_map { png \"frame3.png\" } }\n"
                               << "#break\n#else\n  #declare P = pigment { rgb 0.5 }\n#end\n"
                               << "#if (clock > 1)\n#include \"cond.inc\"\n#end\n";
  const farm::PovraySceneFiles c = farm::povray_scene_files((dir / "c.pov").string(), {dir.string()});
  CHECK(c.files == std::vector<std::string>{(dir / "cond.inc").string()});
  REQUIRE(c.warnings.size() == 2);
  CHECK(c.warnings[0].find("c.pov:3:42: png file 'frame3.png' not found") != std::string::npos);
  CHECK(c.warnings[0].find("inside the #switch at line 1: POV-Ray reads it only if that branch runs") != std::string::npos);
  CHECK(c.warnings[1].find("cond.inc:1:40: png file 'late.png' not found") != std::string::npos);
  CHECK(c.warnings[1].find("in a file included inside a conditional block") != std::string::npos);
  // A POV-Ray .ini is not read as a scene (it was read as TOML: "1:1: TOML syntax error").
  std::ofstream(dir / "desk.ini") << "Antialias=off\nInput_File_Name=desk.pov\n";
  farm::RenderOptions ini;
  ini.scene_path = (dir / "desk.ini").string();
  CHECK_THROWS_WITH_AS(farm::load_scene_desc(ini),
                       doctest::Contains("desk.ini: a POV-Ray .ini file is not a scene the farm reads: render the .pov "
                                         "it names (Input_File_Name) and pass its settings with --renderer-options"),
                       std::runtime_error);
  std::ofstream(dir / "after.pov") << "#if (clock > 1)\n#declare A = 1;\n#end\nsphere { 0, 1 pigment { image_map { png \"x.png\" } } }\n";
  CHECK_THROWS_WITH_AS(farm::povray_scene_files((dir / "after.pov").string(), {dir.string()}),
                       doctest::Contains("after.pov:4:41: png file 'x.png' not found"), std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("povray: a worker with another POV-Ray sits the job out, shown with its reason, and the job goes on") {
  if (!have_povray()) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_versions");
  std::ofstream(dir / "ball.pov") << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
                                  << "sphere { 0, 1 pigment { rgb <1, 0.4, 0.1> } }\n";
  fs::create_directories(dir / "other");
  std::ofstream(dir / "other" / "povray") << "#!/bin/sh\necho 'POV-Ray 9.9.9 (another build)'\n";
  fs::permissions(dir / "other" / "povray", fs::perms::owner_all);
  const std::string scene = (dir / "ball.pov").string(), out = (dir / "out.png").string();
  test_process::Child master({k_farm, "master", scene, "-o", out, "--bind", "tcp://127.0.0.1:*", "--no-journal", "--width",
                              "24", "--height", "16", "--http", "127.0.0.1:0"},
                             (dir / "master.log").string());
  REQUIRE(master.wait_for_log("live view:", 20));
  const std::string endpoint = endpoint_from(master);
  std::smatch port;
  const std::string mlog = master.log();
  REQUIRE(std::regex_search(mlog, port, std::regex("live view: http://127\\.0\\.0\\.1:([0-9]+)/")));
  // PATH finds the other povray first: this worker's POV-Ray is not the master's.
  // (Without --once: a --once worker that cannot take part exits 1 at once, while this one stays.)
  test_process::Child other({"/usr/bin/env", "PATH=" + (dir / "other").string() + ":/usr/bin:/bin", k_farm, "worker",
                             "--connect", endpoint, "--threads", "1", "--name", "other", "--cache",
                             (dir / "cache").string(), "--give-up-after", "20"},
                            (dir / "other.log").string());
  REQUIRE(master.wait_for_log("sits this job out", 30));
  CHECK_MESSAGE(master.log().find("worker 1 'other' sits this job out: this worker's POV-Ray is 'POV-Ray 9.9.9 (another "
                                  "build)', the job's is 'POV-Ray 3.7") != std::string::npos,
                master.log());
  // The live view shows it as sitting out, with the reason.
  std::string status;
  for (int i = 0; i < 50 && status.find("sitting out") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    httplib::Client c("127.0.0.1", std::stoi(port[1]));
    if (auto r = c.Get("/api/status")) status = r->body;
  }
  CHECK_MESSAGE(status.find("\"state\": \"sitting out\", \"reason\": \"this worker's POV-Ray is 'POV-Ray 9.9.9") !=
                    std::string::npos,
                status);
  // A worker with the master's POV-Ray renders the job; both workers end with it.
  test_process::Child same({k_farm, "worker", "--connect", endpoint, "--threads", "1", "--once", "--name", "same", "--cache",
                            (dir / "cache").string(), "--give-up-after", "20"},
                           (dir / "same.log").string());
  CHECK(master.wait(60) == 0);
  CHECK(same.wait(30) == 0);
  CHECK(fs::exists(out));
  CHECK(other.poll() == -1);  // still connected, waiting for a job it can render
  other.kill(SIGTERM);
  CHECK(other.wait(30) == 0);
  fs::remove_all(dir);
}

TEST_CASE("povray: an animation's frames (+KFI..+KFF, clock) are the farm's frames, each equal to povray's own") {
  if (!have_povray()) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_animation");
  std::ofstream(dir / "anim.pov") << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
                                  << "sphere { <clock * 2 - 1, 0, 0>, 0.5 pigment { rgb <1, 0.4, frame_number / 4> } }\n";
  const std::string scene = (dir / "anim.pov").string();
  const std::vector<std::string> look = {"--width", "32", "--height", "24", "--renderer-options", "+KFI2 +KFF4 +A0.3"};
  auto farm = [&](std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), k_farm);
    args.insert(args.end(), look.begin(), look.end());
    return test_process::run(args, (dir / log).string(), 120);
  };
  REQUIRE(farm({"single", scene, "-o", (dir / "single.png").string()}, "single.log") == 0);
  REQUIRE(farm({"render", scene, "-o", (dir / "render.png").string(), "--workers", "2", "--block", "8"}, "render.log") == 0);
  for (const char* frame : {"_0001.png", "_0002.png", "_0003.png"}) {
    CAPTURE(frame);
    CHECK(test_process::same_file((dir / (std::string("single") + frame)).string(), (dir / (std::string("render") + frame)).string()));
  }
  CHECK_FALSE(pixels_of((dir / "single_0001.png").string()) == pixels_of((dir / "single_0003.png").string()));
  // The farm's frame 2 is POV-Ray's frame 3 of 2..4 (clock 0.5): povray by hand renders it so.
  REQUIRE(test_process::run({"/bin/sh", "-c",
                             "cd '" + dir.string() + "' && povray +Ianim.pov +Ohand.png +FN8 +W32 +H24 +KFI2 +KFF4 +SF3 +EF3 "
                             "+A0.3 -D -V"},
                            (dir / "hand.log").string(), 120) == 0);
  CHECK(pixels_of((dir / "hand3.png").string()) == pixels_of((dir / "single_0002.png").string()));
  // --frame picks one; beyond the animation is refused.
  REQUIRE(farm({"single", scene, "-o", (dir / "one.png").string(), "--frame", "2"}, "one.log") == 0);
  CHECK(test_process::same_file((dir / "one.png").string(), (dir / "single_0002.png").string()));
  test_process::Child beyond({k_farm, "single", scene, "-o", (dir / "x.png").string(), "--frame", "4", "--width", "32",
                              "--height", "24", "--renderer-options", "+KFI2 +KFF4"},
                             (dir / "beyond.log").string());
  CHECK(beyond.wait(30) == 2);
  CHECK_MESSAGE(beyond.log().find("--frame 4 but the scene has 3 frame(s)") != std::string::npos, beyond.log());
  fs::remove_all(dir);
}

TEST_SUITE_END();
