// `farm --version` (issue 40, packages): the version CMake's project() declares, the source commit
// the binary was built from and the build, on one line, exit 0; and the build id peers compare
// carries the same version and commit.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "farm/farm_fixture.h"
#include "job/build_id.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

TEST_CASE("version: farm --version prints the version, the source commit and the build, and exits 0") {
  const fs::path dir = test_paths::temp_dir("version");
  const std::string log = (dir / "version.log").string();
  REQUIRE(test_process::run({k_farm, "--version"}, log, 30) == 0);
  std::ifstream in(log);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(std::regex_search(said, std::regex("^farm [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]{7,}(-dirty)?|unknown), "
                                                   "built [A-Z][a-z]{2} [ 0-9][0-9] [0-9]{4} [0-9:]{8}, (gcc|clang) [^)]+\\)\n$")),
                said);
  CHECK(said.rfind("farm " + farm::farm_version() + " (commit " + farm::farm_commit() + ", ", 0) == 0);
  CHECK(farm::farm_build_id().find(farm::farm_version() + " " + farm::farm_commit()) != std::string::npos);
  fs::remove_all(dir);
}

TEST_SUITE_END();
