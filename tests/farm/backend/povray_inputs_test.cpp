// What reaches POV-Ray from the user (issue 38): switches checked before any render with a
// message that says what is wrong (not "stoi", not "povray failed (exit 1)"), and file and folder
// names POV-Ray's own command-line parser would split (a space, ';', '#') taken as they are, by
// `farm single` and `farm render` alike. Skips, saying so, without povray and bwrap.
#include <doctest/doctest.h>

#include <fstream>

#include "backend/povray_renderer.h"
#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

TEST_CASE("povray: a switch POV-Ray would refuse is refused before any render, saying why" * doctest::test_suite("unit")) {
  for (const char* block : {"+BSabc", "+BS12x", "+BS99999999999", "+BS2", "+BS"}) {
    CAPTURE(block);
    const std::string said = std::string("'") + block + "': +BS takes POV-Ray's block size, a whole number of pixels in 4..9999";
    CHECK_THROWS_WITH_AS(farm::povray_options(block), doctest::Contains(said.c_str()), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(farm::povray_options("+XY1"), doctest::Contains("'+XY1' is not one the farm passes on"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(farm::povray_options("Declare=X=\"str\""), doctest::Contains("takes an identifier and a number"),
                       std::invalid_argument);
  CHECK_THROWS_AS(farm::povray_options("Declare=1X=2"), std::invalid_argument);
  CHECK_THROWS_AS(farm::povray_options("Declare=X=nan"), std::invalid_argument);
  CHECK(farm::povray_options("Declare=Shade=0.25 Declare=_n=-3e2 +BS16") ==
        std::vector<std::string>{"Declare=Shade=0.25", "Declare=_n=-3e2", "+BS16"});
}

TEST_CASE("povray: a scene name and a TMPDIR with spaces, semicolons and hashes render in single and in the farm, byte-identical") {
  if (test_process::run({"/bin/sh", "-c", "command -v povray && command -v bwrap"}, "/dev/null") != 0) {
    MESSAGE("skipped: needs Debian's povray and bubblewrap");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_names");
  const fs::path scenes = dir / "my scenes; #1";
  const fs::path tmp = dir / "t mp;#";
  fs::create_directories(scenes);
  fs::create_directories(tmp);
  std::ofstream(scenes / "shade; #2.inc") << "#declare Shade = 0.7;\n";
  std::ofstream(scenes / "ball #1; v2.pov") << "#include \"shade; #2.inc\"\ncamera { location <0, 0, -3> look_at 0 }\n"
                                               "light_source { <2, 4, -3> rgb 1 }\nsphere { 0, 1 pigment { rgb Shade } }\n";
  const std::string scene = (scenes / "ball #1; v2.pov").string();
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  const std::string env_tmp = "TMPDIR=" + tmp.string();
  REQUIRE(test_process::run({"/usr/bin/env", env_tmp, k_farm, "single", scene, "-o", single, "--width", "24", "--height", "16"},
                            (dir / "single.log").string(), 120) == 0);
  REQUIRE(test_process::run({"/usr/bin/env", env_tmp, "FARM_CACHE=" + (dir / "cache").string(), k_farm, "render", scene, "-o",
                             render, "--width", "24", "--height", "16", "--workers", "1"},
                            (dir / "render.log").string(), 120) == 0);
  CHECK(test_process::same_file(single, render));
  CHECK(fs::is_empty(tmp));
  // POV-Ray's own words when it refuses what the farm passed: never "povray failed (exit 1)" alone.
  std::ofstream(dir / "bad.pov") << "camera { location <0, 0, -3> look_at 0 }\nsphere { 0, 1 pigment { rgb Nowhere } }\n";
  CHECK(test_process::run({k_farm, "single", (dir / "bad.pov").string(), "-o", single, "--width", "8", "--height", "8"},
                          (dir / "bad.log").string(), 120) == 2);
  std::ifstream in(dir / "bad.log");
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(said.find("Nowhere") != std::string::npos, said);
}

TEST_CASE("povray: a data file the scene opens to read with fopen travels to the workers, and one that is nowhere is refused by name") {
  if (test_process::run({"/bin/sh", "-c", "command -v povray && command -v bwrap"}, "/dev/null") != 0) {
    MESSAGE("skipped: needs Debian's povray and bubblewrap");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_fopen_read");
  fs::create_directories(dir / "data");
  std::ofstream(dir / "data" / "shade.txt") << "0.35,\n";
  const std::string ball = "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
                           "sphere { 0, 1 pigment { rgb Shade } }\n";
  std::ofstream(dir / "reads.pov") << "#fopen F \"data/shade.txt\" read\n#read (F, Shade)\n#fclose F\n" + ball;
  const std::string scene = (dir / "reads.pov").string();
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--width", "16", "--height", "16"},
                            (dir / "single.log").string(), 120) == 0);
  // Before the scan took #fopen's name, the workers had no data/shade.txt and the job failed.
  REQUIRE(test_process::run({"/usr/bin/env", "FARM_CACHE=" + (dir / "cache").string(), k_farm, "render", scene, "-o", render,
                             "--width", "16", "--height", "16", "--workers", "1"},
                            (dir / "render.log").string(), 120) == 0);
  CHECK(test_process::same_file(single, render));
  std::ofstream(dir / "missing.pov") << "#fopen F \"nowhere.txt\" read\n#read (F, Shade)\n#fclose F\n" + ball;
  for (const char* command : {"single", "render"}) {
    CHECK(test_process::run({k_farm, command, (dir / "missing.pov").string(), "-o", single, "--width", "8", "--height", "8"},
                            (dir / "missing.log").string(), 120) == 2);
    std::ifstream in(dir / "missing.log");
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_MESSAGE(said.find("missing.pov:1:10: #fopen 'nowhere.txt' read not found") != std::string::npos, said);
  }
  // An absolute name would not be there inside the sandbox: refused by both, located.
  std::ofstream(dir / "absolute.pov") << "#fopen F \"/etc/hostname\" read\n#read (F, Shade)\n#fclose F\n" + ball;
  for (const char* command : {"single", "render"}) {
    CHECK(test_process::run({k_farm, command, (dir / "absolute.pov").string(), "-o", single, "--width", "8", "--height", "8"},
                            (dir / "absolute.log").string(), 120) == 2);
    std::ifstream in(dir / "absolute.log");
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_MESSAGE(said.find("absolute.pov:1:10: #fopen '/etc/hostname' read is an absolute path") != std::string::npos, said);
  }
}

TEST_CASE("povray: a scene path with a double quote is refused before any render, naming it") {
  if (test_process::run({"/bin/sh", "-c", "command -v povray && command -v bwrap"}, "/dev/null") != 0) {
    MESSAGE("skipped: needs Debian's povray and bubblewrap");
    return;
  }
  // POV-Ray's option parser has no way to quote a double quote; a space, ';' or '#' are quoted (above).
  const fs::path dir = test_paths::temp_dir("povray_double_quote");
  const fs::path scene = dir / "a\"b.pov";
  std::ofstream(scene) << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
                          "sphere { 0, 1 pigment { rgb 1 } }\n";
  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    const std::string log = (dir / (std::string(command) + ".log")).string();
    std::vector<std::string> cmd = {"/usr/bin/env", "FARM_CACHE=" + (dir / "cache").string(), k_farm, command, scene.string(),
                                    "-o", (dir / "q.png").string(), "--width", "8", "--height", "8"};
    if (command == std::string("render")) cmd.insert(cmd.end(), {"--workers", "1"});
    CHECK(test_process::run(cmd, log, 120) == 1);
    std::ifstream in(log);
    const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_MESSAGE(said.find("POV-Ray cannot be given a path with a double quote (\") in it") != std::string::npos, said);
    CHECK(!fs::exists(dir / "q.png"));
  }
  fs::remove_all(dir);
}
