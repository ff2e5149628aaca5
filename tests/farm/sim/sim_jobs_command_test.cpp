// `farm sim --jobs` as a user runs it: the table and the --stats JSON of several jobs, and a bad
// jobs file refused with its file, line and key (exit 2).
#include <doctest/doctest.h>

#include <fstream>

#include "farm/farm_fixture.h"
#include "farm/uniform_cost_map.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("sim jobs command: a table per job and the stats JSON, and a bad jobs file refused naming its file, line and key") {
  const fs::path dir = test_paths::temp_dir("sim_jobs_command");
  // 16 blocks of 0.5 s per job (64x64 in 16x16 blocks).
  uniform_map(64, 64, 4, 0.5 / 16).write((dir / "u.costmap").string());
  std::ofstream(dir / "cluster.toml") << "per_block_overhead_ms = 0\n[network]\nlatency_ms = 0\n"
                                         "[[group]]\ncount = 2\nprefetch = 0\nstartup = 0\n";
  std::ofstream(dir / "jobs.toml") << "[[job]]\nname = \"low\"\npriority = 1\nload_ms = 250\n"
                                      "[[job]]\nname = \"a\"\npriority = 5\nload_ms = 250\n"
                                      "[[job]]\nname = \"b\"\npriority = 5\nload_ms = 250\ncost_map = \"u.costmap\"\n";
  const std::vector<std::string> sim = {k_farm, "sim", "--cost-map", (dir / "u.costmap").string(), "--cluster",
                                        (dir / "cluster.toml").string(), "--policy", "fixed", "--block", "16"};
  std::vector<std::string> ok = sim;
  for (const char* a : {"--jobs", "JOBS", "--stats", "STATS"}) ok.push_back(a);
  ok[ok.size() - 3] = (dir / "jobs.toml").string();
  ok[ok.size() - 1] = (dir / "stats.json").string();
  REQUIRE(test_process::run(ok, (dir / "out.txt").string()) == 0);
  const std::string out = read_text(dir / "out.txt");
  CHECK_MESSAGE(contains(out, "Simulated 3 job(s) sharing 2 workers"), out);
  // The fives end together at 8.25 s, then the one runs on both workers from 8.5 s to 12.5 s.
  CHECK_MESSAGE(contains(out, "  a                       5     0.000     0.250     8.250     8.250      8.250      16       1"), out);
  CHECK_MESSAGE(contains(out, "  low                     1     0.000     8.500    12.500    12.500"), out);
  CHECK_MESSAGE(contains(out, "Makespan (all jobs)      12.500 s"), out);
  const std::string stats = read_text(dir / "stats.json");
  CHECK(contains(stats, "\"service\": true"));
  CHECK(contains(stats, "\"name\": \"b\", \"priority\": 5, \"completed\": true"));
  CHECK(contains(stats, "\"makespan\": 12.500"));  // and the service's 5 us per message

  std::ofstream(dir / "bad.toml") << "[[job]]\nname = \"x\"\ncost_map = \"missing.costmap\"\n";
  std::vector<std::string> bad = sim;
  bad.push_back("--jobs");
  bad.push_back((dir / "bad.toml").string());
  CHECK(test_process::run(bad, (dir / "bad.txt").string()) == 2);
  const std::string said = read_text(dir / "bad.txt");
  CHECK_MESSAGE(contains(said, "bad.toml:3:12: 'cost_map' of job 'x'"), said);
  CHECK_MESSAGE(contains(said, "missing.costmap"), said);
  fs::remove_all(dir);
}

TEST_SUITE_END();
