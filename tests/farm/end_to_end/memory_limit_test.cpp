// Memory failures (docs/failures.md, "not enough memory"): under an address-space limit
// (prlimit --as, util-linux) a frame or image that cannot be allocated is exit 1 with a message
// naming it and its size, never SIGABRT on an escaped std::bad_alloc (issue 38).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "farm/farm_fixture.h"
#include "under_asan.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

const char* const k_prlimit = "/usr/bin/prlimit";
const std::string k_two_gib = "--as=" + std::to_string(2ull << 30);  // the farm starts in well under it

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs the farm under the limit; returns its exit code and output.
std::pair<int, std::string> limited(const fs::path& dir, const std::string& name, std::vector<std::string> farm_args) {
  std::vector<std::string> args = {k_prlimit, k_two_gib, k_farm};
  args.insert(args.end(), farm_args.begin(), farm_args.end());
  const std::string log = (dir / (name + ".log")).string();
  const int code = test_process::run(args, log, 120);
  return {code, read_all(log)};
}

}  // namespace

TEST_CASE("memory: single, master and render under a 2 GiB limit at 16384x16384 exit 1 naming the buffer and its size") {
  if (FARM_UNDER_ASAN) {
    MESSAGE("skipped: AddressSanitizer reserves terabytes of address space, so its build cannot run under a 2 GiB limit");
    return;
  }
  if (::access(k_prlimit, X_OK) != 0) {
    MESSAGE("skipped: no prlimit (util-linux)");
    return;
  }
  const fs::path dir = test_paths::temp_dir("memory_limit");
  const std::string scene = write_scene(dir, 1);

  auto single = limited(dir, "single", {"single", scene, "-o", (dir / "s.png").string(), "--threads", "1", "--width", "16384",
                                        "--height", "16384"});
  CHECK_MESSAGE(single.first == 1, single.second);
  CHECK_MESSAGE(single.second.find("error: not enough memory for the 16384x16384 frame (4.0 GiB of float RGBA)") !=
                    std::string::npos,
                single.second);
  CHECK(single.second.find("terminate called") == std::string::npos);

  // An EXR job's image is assembled in float RGB: 3 GiB. --policy fixed: no preview render first.
  auto master = limited(dir, "master", {"master", scene, "-o", (dir / "m.exr").string(), "--bind", "tcp://127.0.0.1:*",
                                        "--policy", "fixed", "--no-journal", "--width", "16384", "--height", "16384"});
  CHECK_MESSAGE(master.first == 1, master.second);
  CHECK_MESSAGE(master.second.find("error: not enough memory for the 16384x16384 image being assembled (3.0 GiB of float RGB)") !=
                    std::string::npos,
                master.second);
  CHECK(master.second.find("std::bad_alloc") == std::string::npos);

  auto render = limited(dir, "render", {"render", scene, "-o", (dir / "r.exr").string(), "--workers", "1", "--threads", "1",
                                        "--policy", "fixed", "--no-journal", "--width", "16384", "--height", "16384"});
  CHECK_MESSAGE(render.first == 1, render.second);
  CHECK_MESSAGE(render.second.find("error: not enough memory for the 16384x16384 image being assembled (3.0 GiB of float RGB)") !=
                    std::string::npos,
                render.second);
  for (const char* out : {"s.png", "m.exr", "r.exr"}) CHECK_FALSE(fs::exists(dir / out));
  fs::remove_all(dir);
}

TEST_CASE("memory: the master reads a 63 MiB POV-Ray scene in well under 1 GiB" * doctest::test_suite("slow")) {
  if (FARM_UNDER_ASAN) {
    MESSAGE("skipped: AddressSanitizer reserves terabytes of address space, so its build cannot run under a 1 GiB limit");
    return;
  }
  if (::access(k_prlimit, X_OK) != 0) {
    MESSAGE("skipped: no prlimit (util-linux)");
    return;
  }
  // The scan held every token of a file at once, about 28 times its size: 1.82 GB of RSS for
  // 64 MiB (results/bench_sandbox.md). It now reads tokens as it needs them (256 MB measured), so
  // the largest scene the farm takes is read under a 1 GiB address-space limit.
  const fs::path dir = test_paths::temp_dir("memory_scan");
  {
    std::ofstream out(dir / "huge.pov");
    const std::string line = "#declare Q = <1.25, 2.5, 3.75>; // filler\n";
    for (size_t n = 0; n < (size_t{63} << 20) / line.size(); ++n) out << line;
    out << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\nsphere { 0, 1 pigment { rgb 1 } }\n";
  }
  const std::string log = (dir / "master.log").string();
  const int code = test_process::run({k_prlimit, "--as=" + std::to_string(1ull << 30), k_farm, "master", (dir / "huge.pov").string(),
                                      "-o", (dir / "h.png").string(), "--bind", "tcp://127.0.0.1:*", "--give-up-after", "1"},
                                     log, 120);
  const std::string said = read_all(log);
  // Read, listening, and no worker came: the job's own failure, not memory.
  CHECK_MESSAGE(code == 1, said);
  CHECK_MESSAGE(said.find("no worker for 1 s (--give-up-after)") != std::string::npos, said);
  CHECK_MESSAGE(said.find("memory") == std::string::npos, said);
  fs::remove_all(dir);
}

TEST_SUITE_END();
