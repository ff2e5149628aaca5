// `farm render --hosts` against real OpenSSH servers: three "hosts", each a network namespace
// with its own address joined to this one by veth pairs (real TCP, not loopback) and its own
// throwaway sshd (tools/cluster/ssh_hosts.py). Skipped, saying why, where that cannot run
// (not root, no sshd, no network namespaces).
#include <doctest/doctest.h>
#include <signal.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "farm/backend_scenes.h"
#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("cluster");

using namespace farm_fixture;
using launched_workers::none_left;
using launched_workers::read_text;

namespace {

const std::string k_harness = test_paths::project("tools/cluster/ssh_hosts.py");

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
  // host1 and host2 as `root@ADDRESS:PORT` (from ssh_config) in site `site`, host3 plain: a
  // relay's site workers reach it at its host's name as written, which must be an address
  // they resolve, not an ssh alias (docs/cli.md).
  std::string site_host_file(const std::string& cache, const std::string& site) const {
    const std::string config = read_text((dir / "ssh_config").string());
    const std::string path = (dir / "farm_hosts_site.txt").string();
    std::ofstream out(path);
    for (const std::string name : {"host1", "host2"}) {
      std::smatch m;
      if (!std::regex_search(config, m, std::regex("Host " + name + "\n  HostName ([0-9.]+)\n  Port ([0-9]+)")))
        return "";
      out << "root@" << m[1] << ":" << m[2] << " threads=1 cache=" << cache << " site=" << site << "\n";
    }
    out << "root@host3 threads=1 cache=" << cache << "\n";
    return path;
  }
};

}  // namespace

TEST_CASE("ssh cluster: farm render --hosts over three real sshd hosts is byte-identical, a host killed mid-render changes nothing, no worker is left") {
  Fixture f("ssh_cluster", 600);  // long enough for every host to get blocks (with margin: blocks got cheaper)
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
  CHECK_MESSAGE(test_process::run(args(out1), f.path("render1.log"), 180) == 0, read_text(f.path("render1.log")));
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
  args2.insert(args2.end(), {"--max-copies", "1", "--stats", f.path("stats2.json")});
  test_process::Child render(args2, f.path("render2.log"));
  const bool loaded = render.wait_for_log("[root@host2] info: scene loaded", 120);
  REQUIRE_MESSAGE(loaded, "render2.log:\n" << render.log());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // its request for blocks reaches the master
  CHECK(test_process::run({"/usr/bin/python3", k_harness, "kill-host", "--dir", hosts.dir.string(), "--host", "host2"},
                          f.path("kill.log"), 60) == 0);
  CHECK(render.wait(180) == 0);
  CHECK(test_process::same_file(f.path("farm2.png"), f.reference));
  const std::string log2 = read_text(f.path("render2.log"));
  // Whether host2 held a block comes from the statistics, not from the outcome checked below.
  std::smatch joined;
  REQUIRE(std::regex_search(log2, joined, std::regex("worker ([0-9]+) 'root@host2' joined")));
  const std::string stats = read_text(f.path("stats2.json"));
  const std::regex lease_of_host2("\"worker\": " + joined[1].str() + ", [^}]*\"outcome\": \"([a-z]+)\"");
  std::vector<std::string> outcomes;
  for (auto it = std::sregex_iterator(stats.begin(), stats.end(), lease_of_host2); it != std::sregex_iterator(); ++it)
    outcomes.push_back((*it)[1]);
  if (outcomes.empty()) {
    // Possible only when every block was out before host2 asked: nothing of the job was on it.
    MESSAGE("host2 got no block before the others finished; its death did not matter to this run");
  } else {
    // It hangs on its first block: that lease can only end as lost, with host2 declared dead.
    CHECK(outcomes.front() == "lost");
    CHECK(log2.find("worker " + joined[1].str() + " is silent") != std::string::npos);
    CHECK(log2.find("1 lost") != std::string::npos);
  }
  // Whether or not it held a block, the closing summary says what became of host2 (it was
  // missing when host2 died before its worker got a block).
  CHECK(log2.find("what became of each host:") != std::string::npos);
  CHECK(std::regex_search(log2, std::regex("\n  root@host2: (joined, then lost during the render|failed: ssh failed: )")));
  CHECK(log2.find("  root@host1: joined, ") != std::string::npos);
  CHECK(none_left(f.cache()));
}

TEST_CASE(
    "ssh cluster: a site of two real sshd hosts behind a relay on the first, and a plain host, is byte-identical") {
  Fixture f("ssh_site", 600);  // long enough for the relay to join with its site workers
  SshHosts hosts(f.dir);
  if (!hosts.up) {
    MESSAGE("skipped: real sshd hosts cannot run here: " << hosts.why_not);
    return;
  }
  const std::string host_file = hosts.site_host_file(f.cache(), "lab");
  REQUIRE_MESSAGE(!host_file.empty(), read_text((hosts.dir / "ssh_config").string()));
  const std::string out = f.path("farm.png"), log = f.path("render.log");
  CHECK_MESSAGE(test_process::run(
                    {k_farm, "render", f.scene, "-o", out, "--hosts", host_file, "--ssh-command", hosts.ssh_command(),
                     "--advertise", hosts.master_address(), "--no-journal", "--policy", "fixed", "--block", "8"},
                    log, 180) == 0,
                read_text(log));
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = read_text(log);
  INFO(text);
  // The relay listens in host1's namespace; the site's workers reach it over the veth links.
  CHECK(std::regex_search(text, std::regex("relay of site lab on root@[0-9.]+:[0-9]+: listening, its site's workers "
                                           "connect to tcp://[0-9.]+:[0-9]+")));
  CHECK(std::regex_search(text, std::regex("relay [0-9]+ 'lab' joined for a site of")));
  CHECK(std::regex_search(text, std::regex("farm-relay-site-worker joined root@[0-9.]+:[0-9]+")));
  CHECK(text.find("hosts: 3 started, 1 relay, ") != std::string::npos);
  CHECK(text.find(": failed: ") == std::string::npos);
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
  // Its log says why if a host does not join (a CI run once waited 60 s for it in vain).
  const bool all_joined = render.wait_for_log("hosts: 3 started, 3 joined", 120);
  REQUIRE_MESSAGE(all_joined, "render.log:\n" << render.log());
  // Its once-flaky failure left no output: say which processes were there.
  CHECK_MESSAGE(launched_workers::count(f.cache()) == 3, "workers:\n" << launched_workers::listing(f.cache()));
  render.kill(SIGKILL);
  CHECK_MESSAGE(none_left(f.cache()), "left after 10 s:\n" << launched_workers::listing(f.cache()) << "render.log:\n"
                                                            << render.log());
}

TEST_CASE("ssh cluster: a Blender scene through --hosts is byte-identical to farm single of it") {
  if (!backend_scenes::have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("ssh_blender");
  SshHosts hosts(dir);
  if (!hosts.up) {
    MESSAGE("skipped: real sshd hosts cannot run here: " << hosts.why_not);
    return;
  }
  // The .blend and its image travel over the hosts' TCP links into their caches; each host's
  // worker runs its own Blender on them.
  const std::string scene = backend_scenes::make_blender_scene(dir, 48, 36, 16);
  const std::string single = (dir / "single.png").string(), out = (dir / "farm.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--frame", "2"}, (dir / "single.log").string(), 120) == 0);
  const std::string cache = (dir / "cache").string();
  CHECK_MESSAGE(test_process::run({k_farm, "render", scene, "-o", out, "--frame", "2", "--hosts", hosts.host_file(cache),
                                   "--ssh-command", hosts.ssh_command(), "--advertise", hosts.master_address(),
                                   "--no-journal", "--policy", "fixed", "--block", "8"},
                                  (dir / "render.log").string(), 180) == 0,
                read_text((dir / "render.log").string()));
  CHECK(test_process::same_file(single, out));
  CHECK(read_text((dir / "render.log").string()).find("hosts: 3 started") != std::string::npos);
  CHECK(none_left(cache));
  // Not the folder: ~SshHosts runs ssh_hosts.py down after this, and down finds the hosts (their
  // netns and sshd pids) by the state file in it; removed here, it left three sshd running.
}

TEST_SUITE_END();
