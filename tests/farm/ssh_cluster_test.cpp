// `farm render --hosts` against real OpenSSH servers: three "hosts", each a network namespace
// with its own address joined to this one by veth pairs (real TCP, not loopback) and its own
// throwaway sshd (tools/cluster/ssh_hosts.py). Skipped, saying why, where that cannot run
// (not root, no sshd, no network namespaces).
#include <doctest/doctest.h>
#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "farm_fixture.h"

using namespace farm_fixture;

namespace {

const std::string k_harness = test_paths::project("tools/cluster/ssh_hosts.py");

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Processes that are launched workers of this test (its cache folder is on their command line).
int workers_with(const std::string& marker) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = read_text((e.path() / "cmdline").string());
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos && cmd.find(" worker ") != std::string::npos &&
        cmd.find("ssh ") == std::string::npos)
      ++n;
  }
  return n;
}

bool none_left(const std::string& marker, double seconds = 10) {
  for (double t = 0; t < seconds; t += 0.1) {
    if (workers_with(marker) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// Three sshd "hosts" for the life of one test.
struct SshHosts {
  fs::path dir;
  bool up = false;
  std::string why_not;
  explicit SshHosts(const fs::path& d) : dir(d / "hosts") {
    const std::string check_log = (d / "check.log").string();
    if (test_process::run({"/usr/bin/python3", k_harness, "check"}, check_log, 60) != 0) {
      why_not = read_text(check_log);
      return;
    }
    const std::string log = (d / "up.log").string();
    up = test_process::run({"/usr/bin/python3", k_harness, "up", "--dir", dir.string(), "--hosts", "3"}, log, 120) == 0;
    if (!up) why_not = "ssh_hosts.py up failed: " + read_text(log);
  }
  ~SshHosts() {
    if (up) test_process::run({"/usr/bin/python3", k_harness, "down", "--dir", dir.string()}, (dir / "down.log").string(), 60);
  }
  std::string ssh_command() const { return "ssh -F " + (dir / "ssh_config").string(); }
  std::string master_address() const {
    std::string a = read_text((dir / "master_address").string());
    while (!a.empty() && (a.back() == '\n' || a.back() == ' ')) a.pop_back();
    return a;
  }
  // The harness's host lines with a thread count and this test's cache folder; hosts whose
  // name contains `special` run `special_farm` instead of this farm.
  std::string host_file(const std::string& cache, const std::string& special = "", const std::string& special_farm = "") const {
    std::istringstream in(read_text((dir / "hosts.txt").string()));
    const std::string path = (dir / ("farm_hosts" + special + ".txt")).string();
    std::ofstream out(path);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      out << line << " threads=1 cache=" << cache;
      if (!special.empty() && line.find(special) != std::string::npos) out << " farm=" << special_farm;
      out << "\n";
    }
    return path;
  }
};

}  // namespace

TEST_CASE("ssh cluster: farm render --hosts over three real sshd hosts is byte-identical; a host killed mid-render changes nothing; no worker is left") {
  Fixture f("ssh_cluster", 200);  // long enough for every host to get blocks
  SshHosts hosts(f.dir);
  if (!hosts.up) {
    MESSAGE("skipped: real sshd hosts cannot run here: " << hosts.why_not);
    return;
  }
  const std::string host_file = hosts.host_file(f.cache());
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{k_farm, "render", f.scene, "-o", out, "--hosts", host_file, "--ssh-command",
                                    hosts.ssh_command(), "--advertise", hosts.master_address(), "--no-journal",
                                    "--block", "8", "--heartbeat", "0.2", "--liveness", "3"};
  };

  // 1. All three hosts render.
  const std::string out1 = f.path("farm1.png");
  CHECK(test_process::run(args(out1), f.path("render1.log"), 180) == 0);
  CHECK(test_process::same_file(out1, f.reference));
  const std::string log1 = read_text(f.path("render1.log"));
  CHECK(log1.find("hosts: 3 started") != std::string::npos);
  CHECK(log1.find("workers connect to tcp://" + hosts.master_address() + ":") != std::string::npos);
  CHECK(none_left(f.cache()));

  // 2. One host dies (link down, every process in it killed) mid-render. Its worker hangs on
  // its first block and --max-copies 1 forbids copies: the job can only finish once the
  // master has declared host2 dead and handed that block to another host.
  const std::string stuck_farm = f.path("stuck_farm.sh");
  std::ofstream(stuck_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --hang-after 0\n";
  fs::permissions(stuck_farm, fs::perms::owner_all);
  std::vector<std::string> args2 = args(f.path("farm2.png"));
  args2[6] = hosts.host_file(f.cache(), "host2", stuck_farm);
  args2.insert(args2.end(), {"--max-copies", "1"});
  test_process::Child render(args2, f.path("render2.log"));
  const bool loaded = render.wait_for_log("[root@host2] info: scene loaded", 60);
  REQUIRE(loaded);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its request for blocks reaches the master
  CHECK(test_process::run({"/usr/bin/python3", k_harness, "kill-host", "--dir", hosts.dir.string(), "--host", "host2"},
                          f.path("kill.log"), 60) == 0);
  CHECK(render.wait(180) == 0);
  CHECK(test_process::same_file(f.path("farm2.png"), f.reference));
  const std::string log2 = read_text(f.path("render2.log"));
  if (log2.find("'root@host2' joined") != std::string::npos && log2.find("declared dead") == std::string::npos) {
    // Only when host2 joined after every block was out: nothing of the job was on it.
    MESSAGE("host2 got no block before the others finished; its death did not matter to this run");
  } else {
    CHECK(log2.find("declared dead") != std::string::npos);
    CHECK(log2.find("1 lost") != std::string::npos);
  }
  CHECK(none_left(f.cache()));
}

TEST_CASE("ssh cluster: the master killed with SIGKILL: every remote worker sees its ssh channel end and exits") {
  Fixture f("ssh_kill", 2);
  SshHosts hosts(f.dir);
  if (!hosts.up) {
    MESSAGE("skipped: real sshd hosts cannot run here: " << hosts.why_not);
    return;
  }
  // Workers that hang after one block: the job cannot finish before the master is killed.
  const std::string stuck_farm = f.path("stuck_farm.sh");
  std::ofstream(stuck_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --hang-after 1\n";
  fs::permissions(stuck_farm, fs::perms::owner_all);
  std::istringstream in(read_text((hosts.dir / "hosts.txt").string()));
  const std::string host_file = f.path("stuck_hosts.txt");
  {
    std::ofstream out(host_file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out << line << " threads=1 farm=" << stuck_farm << " cache=" << f.cache() << "\n";
  }
  test_process::Child render({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", host_file, "--ssh-command",
                              hosts.ssh_command(), "--advertise", hosts.master_address(), "--no-journal"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("hosts: 3 started, 3 joined", 60));
  CHECK(workers_with(f.cache()) == 3);
  render.kill(SIGKILL);
  CHECK(none_left(f.cache()));
}
