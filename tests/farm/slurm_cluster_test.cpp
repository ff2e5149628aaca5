// `farm render --slurm` inside a real Slurm allocation: a single-node cluster of Debian's
// slurmctld, slurmd and munged started for the test (tools/cluster/slurm_node.py). Skipped,
// saying why, where that cannot run (not root, Slurm or munge missing).
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
#include <thread>

#include "farm_fixture.h"

using namespace farm_fixture;

namespace {

const std::string k_harness = test_paths::project("tools/cluster/slurm_node.py");

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Launched workers connecting to `endpoint` (unique to one run: its port).
int workers_for(const std::string& endpoint) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_text((e.path() / "cmdline").string());
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(" worker --launched") != std::string::npos && cmd.find(endpoint + " ") != std::string::npos &&
        cmd.rfind("srun", 0) != 0)
      ++n;
  }
  return n;
}

bool none_left(const std::string& endpoint, double seconds = 15) {
  for (double t = 0; t < seconds; t += 0.1) {
    if (workers_for(endpoint) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string endpoint_in(const std::string& log) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex("workers connect to (tcp://[0-9.]+:[0-9]+)"))) return m[1];
  return "(none)";
}

// A Slurm node for the life of one test; SLURM_CONF points the clients at it meanwhile.
struct SlurmNode {
  fs::path dir;
  bool up = false;
  std::string why_not;
  explicit SlurmNode(const fs::path& d) : dir(d / "slurm") {
    const std::string check_log = (d / "check.log").string();
    if (test_process::run({"/usr/bin/python3", k_harness, "check"}, check_log, 60) != 0) {
      why_not = read_text(check_log);
      return;
    }
    const std::string log = (d / "up.log").string();
    up = test_process::run({"/usr/bin/python3", k_harness, "up", "--dir", dir.string()}, log, 120) == 0;
    if (!up) why_not = "slurm_node.py up failed: " + read_text(log);
    if (up) ::setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
  }
  ~SlurmNode() {
    if (!up) return;
    ::unsetenv("SLURM_CONF");
    test_process::run({"/usr/bin/python3", k_harness, "down", "--dir", dir.string()}, (dir / "down.log").string(), 120);
  }
};

}  // namespace

TEST_CASE("slurm: salloc -n 2 farm render --slurm is byte-identical to single and leaves nothing running") {
  Fixture f("slurm_render", 2);
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  const std::string out = f.path("farm.png");
  CHECK(test_process::run({"/usr/bin/salloc", "-n", "2", k_farm, "render", f.scene, "-o", out, "--slurm", "--no-journal"},
                          f.path("render.log"), 180) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string log = read_text(f.path("render.log"));
  CHECK(log.find("slurm: started 2 worker task(s)") != std::string::npos);
  CHECK(log.find("slurm: 2 tasks, 1 joined") != std::string::npos);  // the second may join after the end
  CHECK(log.find("forcing job termination") == std::string::npos);  // the workers ended by themselves
  CHECK(none_left(endpoint_in(log)));
}

TEST_CASE("slurm: scancel of the job mid-render leaves no worker and the command ends with exit 1") {
  Fixture f("slurm_scancel", 400);  // long enough to be cancelled mid-render
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  test_process::Child render({"/usr/bin/salloc", "-n", "2", k_farm, "render", f.scene, "-o", f.path("farm.png"),
                              "--slurm", "--no-journal"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("2 joined", 60));
  const std::string log = render.log();
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("Granted job allocation ([0-9]+)")));
  const std::string endpoint = endpoint_in(log);
  CHECK(workers_for(endpoint) == 2);
  CHECK(test_process::run({"/usr/bin/scancel", m[1]}, f.path("scancel.log"), 60) == 0);
  CHECK(none_left(endpoint));
  // The master sees its workers' step end and stops: no image, exit 1, and salloc returns.
  CHECK(render.wait(60) == 1);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
}
