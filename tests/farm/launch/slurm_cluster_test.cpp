// `farm render --slurm` inside a real Slurm allocation: a single-node cluster of Debian's
// slurmctld, slurmd and munged started for the test (tools/cluster/slurm_node.py). Skipped,
// saying why, where that cannot run (not root, Slurm or munge missing).
#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include "farm/backend_scenes.h"
#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("cluster");

using namespace farm_fixture;
using launched_workers::read_text;

namespace {

const std::string k_harness = test_paths::project("tools/cluster/slurm_node.py");

std::string endpoint_in(const std::string& log) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex("workers connect to (tcp://[0-9.]+:[0-9]+)"))) return m[1];
  return "(none)";
}

// Where the tasks reach the relay of --slurm-relay: tcp://NODE:PORT.
std::string relay_endpoint_in(const std::string& log) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex("listening, its worker tasks connect to (tcp://[^ \n]+:[0-9]+)"))) return m[1];
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
  CHECK(launched_workers::none_left(endpoint_in(log) + " ", 15));
}

TEST_CASE("slurm: scancel of the job mid-render leaves no worker and the command ends with exit 1") {
  // Long enough to be cancelled mid-render: ~6 s on one thread (400 spp stopped being enough
  // when blocks no longer built the pixel filter table each).
  Fixture f("slurm_scancel", 3000);
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
  CHECK(launched_workers::count(endpoint + " ") == 2);
  CHECK(test_process::run({"/usr/bin/scancel", m[1]}, f.path("scancel.log"), 60) == 0);
  CHECK(launched_workers::none_left(endpoint + " ", 15));
  // The master sees its workers' step end and stops: no image, exit 1, and salloc returns.
  CHECK(render.wait(60) == 1);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
}

TEST_CASE("slurm: one worker task killed mid-render, the other renders the rest: byte-identical image, exit 0") {
  Fixture f("slurm_one_lost", 3000);  // ~6 s on one thread: the kill lands mid-render
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  test_process::Child render({"/usr/bin/salloc", "-n", "2", k_farm, "render", f.scene, "-o", f.path("farm.png"),
                              "--slurm", "--no-journal", "--heartbeat", "0.2", "--liveness", "3"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("2 joined", 60));
  const std::string endpoint = endpoint_in(render.log());
  std::string found;
  REQUIRE(launched_workers::count(endpoint + " ", &found) == 2);
  const pid_t victim = std::stoi(found.substr(0, found.find(':')));
  REQUIRE(::kill(victim, SIGKILL) == 0);
  CHECK_MESSAGE(render.wait(180) == 0, render.log());
  CHECK(test_process::same_file(f.path("farm.png"), f.reference));
  const std::string log = render.log();
  CHECK(log.find("1 lost") != std::string::npos);
  CHECK(log.find("every host failed") == std::string::npos);
  CHECK(log.find("what became of each host:") != std::string::npos);
  CHECK(log.find("joined, then lost during the render") != std::string::npos);
  CHECK(launched_workers::none_left(endpoint + " ", 15));
}

TEST_CASE("slurm: salloc -n 2 farm render --slurm --slurm-relay goes through one relay, byte-identical, nothing left") {
  Fixture f("slurm_relay", 2);
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  const std::string out = f.path("farm.png");
  CHECK(test_process::run({"/usr/bin/salloc", "-n", "2", k_farm, "render", f.scene, "-o", out, "--slurm", "--slurm-relay",
                           "--no-journal"},
                          f.path("render.log"), 180) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string log = read_text(f.path("render.log"));
  INFO(log);
  // The relay says where it runs (srun chose the node), and the tasks connect there, not to the master.
  const std::string relay = relay_endpoint_in(log);
  CHECK(std::regex_search(log, std::regex("(^|\n)\\[relay of slurm job [0-9]+\\] farm-relay-host [^\n]+\n")));
  CHECK(log.find("slurm: started 2 worker task(s) with srun in slurm job") != std::string::npos);
  CHECK(log.find(", through its relay at " + relay) != std::string::npos);
  CHECK(std::regex_search(log, std::regex("info: relay [0-9]+ 'slurm' joined for a site of")));
  // Joined the relay, told by it (both tasks may be reported in one progress line).
  CHECK(std::regex_search(log, std::regex("slurm: 2 tasks, 1 relay, [12] joined")));
  CHECK(log.find("info: worker ") == std::string::npos);  // the master saw no task itself
  CHECK(std::regex_search(log, std::regex("  relay of slurm job [0-9]+: listened on " + relay + ", [12] worker task")));
  CHECK(log.find("the srun step ran to the end (through the allocation's relay)") != std::string::npos);
  CHECK(launched_workers::none_left(endpoint_in(log) + " ", 15));  // the relay
  CHECK(launched_workers::none_left(relay + " ", 15));              // the tasks
}

TEST_CASE("slurm: a --slurm-relay whose step fails is reported once and the tasks render straight to the master") {
  Fixture f("slurm_relay_fails", 2);
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  // An srun first in PATH that refuses the relay's step, as a node without room for it would,
  // and passes every other step to the real srun.
  const fs::path bin = f.dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "srun") << "#!/bin/sh\ncase \" $* \" in *\" relay --launched \"*)\n"
                              << "  echo 'srun: error: no relay step today' >&2; exit 1;;\nesac\n"
                              << "exec /usr/bin/srun \"$@\"\n";
  fs::permissions(bin / "srun", fs::perms::owner_all);
  const std::string path = "PATH=" + bin.string() + ":" + std::getenv("PATH");
  const std::string out = f.path("farm.png");
  CHECK(test_process::run({"/usr/bin/salloc", "-n", "2", "/usr/bin/env", path, k_farm, "render", f.scene, "-o", out,
                           "--slurm", "--slurm-relay", "--no-journal"},
                          f.path("render.log"), 180) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string log = read_text(f.path("render.log"));
  INFO(log);
  CHECK(std::regex_search(log, std::regex("error: the relay of slurm job [0-9]+: the relay exited with code 1: srun: "
                                          "error: no relay step today; its worker tasks connect to the master directly")));
  CHECK(log.find("through its relay") == std::string::npos);
  CHECK(std::regex_search(log, std::regex("info: worker [0-9]+ '[^']+' joined")));  // the master's own
  CHECK(log.find("the srun step ran to the end (straight to the master: the allocation's relay failed)") !=
        std::string::npos);
  CHECK(launched_workers::none_left(endpoint_in(log) + " ", 15));
}

TEST_CASE("slurm: the --slurm-relay killed mid-render: its tasks join the master directly, byte-identical, exit 0") {
  Fixture f("slurm_relay_dies", 3000);  // ~6 s on one thread: the kill lands mid-render
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  test_process::Child render({"/usr/bin/salloc", "-n", "2", k_farm, "render", f.scene, "-o", f.path("farm.png"),
                              "--slurm", "--slurm-relay", "--no-journal"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("2 joined", 60));
  const std::string master = endpoint_in(render.log()), relay = relay_endpoint_in(render.log());
  std::string found;
  // The relay connects to the master; the tasks connect to the relay (the master is only their fallback).
  REQUIRE(launched_workers::count("relay --launched --once --connect " + master + " ", &found) == 1);
  CHECK(launched_workers::count("--connect " + relay + " ") == 2);
  REQUIRE(::kill(std::stoi(found.substr(0, found.find(':'))), SIGKILL) == 0);
  CHECK(render.wait(120) == 0);
  CHECK(test_process::same_file(f.path("farm.png"), f.reference));
  const std::string log = render.log();
  INFO(log);
  CHECK(log.find("its worker tasks join the master directly") != std::string::npos);
  CHECK(std::regex_search(log, std::regex("warning: the relay at " + relay + " is silent: joining the master at " +
                                          master + " instead")));
  CHECK(log.find("the srun step ran to the end (through the allocation's relay, then straight to the master: the "
                 "relay ended)") != std::string::npos);
  CHECK(launched_workers::none_left(master + " ", 15));
  CHECK(launched_workers::none_left(relay + " ", 15));
}

TEST_CASE("slurm: a Blender scene through salloc -n 2 farm render --slurm is byte-identical to farm single of it") {
  if (!backend_scenes::have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  Fixture f("slurm_blender", 2);
  SlurmNode slurm(f.dir);
  if (!slurm.up) {
    MESSAGE("skipped: a Slurm node cannot run here: " << slurm.why_not);
    return;
  }
  const fs::path scene_dir = f.dir / "blend";
  const std::string scene = backend_scenes::make_blender_scene(scene_dir, 48, 36, 16);
  const std::string single = f.path("blend_single.png"), out = f.path("blend_farm.png");
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--frame", "1"}, f.path("single.log"), 120) == 0);
  CHECK(test_process::run({"/usr/bin/salloc", "-n", "2", k_farm, "render", scene, "-o", out, "--frame", "1", "--slurm",
                           "--no-journal", "--policy", "fixed", "--block", "8"},
                          f.path("render.log"), 180) == 0);
  CHECK_MESSAGE(test_process::same_file(single, out), read_text(f.path("render.log")));
  const std::string log = read_text(f.path("render.log"));
  CHECK(log.find("slurm: started 2 worker task(s)") != std::string::npos);
  CHECK(launched_workers::none_left(endpoint_in(log) + " ", 15));
}

TEST_SUITE_END();
