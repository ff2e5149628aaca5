// Launching workers on other machines (farm/launch/): the lifeline and `farm render --hosts`
// end to end (host files and launch keys: launch_inputs_test.cpp) through an ssh stand-in that runs the remote
// command here (the same program path, arguments and standard input as real ssh; the tests
// against a real sshd in network namespaces are in ssh_cluster_test.cpp).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <chrono>
#include <fstream>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"
#include "protocol/protocol.h"
#include "security/curve_keys.h"
#include "security/launch_secrets.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
using launched_workers::none_left;
using launched_workers::read_text;

namespace {

std::string write_fake_ssh(const Fixture& f) { return launched_workers::write_fake_ssh(f.path("fake_ssh.sh")); }

std::vector<std::string> render_args(const Fixture& f, const std::string& out, const std::string& hosts) {
  return {k_farm, "render", f.scene, "-o", out, "--hosts", hosts, "--ssh-command", write_fake_ssh(f),
          "--advertise", "127.0.0.1", "--no-journal"};
}

}  // namespace

TEST_CASE("farm render --hosts: byte-identical to single, a failing host is reported and the others go on, nothing left running") {
  Fixture f("launch_hosts", 2);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "alpha threads=1 cache=" << f.cache() << "\n"
                       << "beta threads=1 cache=" << f.cache() << "\n"
                       << "gamma threads=1 farm=/nonexistent/farm cache=" << f.cache() << "\n";
  const std::string out = f.path("farm.png");
  const std::string log = f.path("render.log");
  CHECK(test_process::run(render_args(f, out, hosts), log, 120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("workers connect to tcp://127.0.0.1:") != std::string::npos);
  CHECK(text.find("error: host gamma: the farm binary was not found there") != std::string::npos);
  CHECK(text.find("[alpha] ") != std::string::npos);  // each host's output carries its label
  CHECK(text.find("hosts: 3 started") != std::string::npos);
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm render --hosts: no host can run a worker -> exit 1 with every host's reason, a farm of another protocol is refused") {
  Fixture f("launch_none", 2);
  // An "old farm" on the host: the same binary speaking protocol 1.
  const std::string old_farm = f.path("old_farm.sh");
  std::ofstream(old_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --protocol-version 1\n";
  fs::permissions(old_farm, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "alpha farm=/nonexistent/farm cache=" << f.cache() << "\n"
                       << "beta farm=" << old_farm << " cache=" << f.cache() << "\n";
  const std::string log = f.path("render.log");
  CHECK(test_process::run(render_args(f, f.path("farm.png"), hosts), log, 120) == 1);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("no host is running a worker any more") != std::string::npos);
  CHECK(text.find("every host failed") != std::string::npos);
  CHECK(text.find("alpha: the farm binary was not found there") != std::string::npos);
  CHECK(text.find("beta: refused (another farm version, or bad keys)") != std::string::npos);
  CHECK(text.find("protocol 1 (this master speaks " + std::to_string(farm::proto::k_protocol_version) + ")") != std::string::npos);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm render --hosts: the master killed with SIGKILL mid-render leaves no worker behind") {
  Fixture f("launch_kill", 2);
  // Workers whose render thread hangs after one block: the job is surely unfinished when the master dies.
  const std::string stuck_farm = f.path("stuck_farm.sh");
  std::ofstream(stuck_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --hang-after 1\n";
  fs::permissions(stuck_farm, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "alpha threads=1 farm=" << stuck_farm << " cache=" << f.cache() << "\nbeta threads=1 farm="
                       << stuck_farm << " cache=" << f.cache() << "\n";
  test_process::Child master(render_args(f, f.path("farm.png"), hosts), f.path("render.log"));
  REQUIRE(master.wait_for_log("hosts: 2 started, 2 joined", 30));
  CHECK(launched_workers::count(f.cache()) == 2);
  master.kill(SIGKILL);
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm worker --launched: the end of standard input (the lifeline) stops it") {
  Fixture f("launch_lifeline", 2);
  using namespace farm::security;
  CurveKeyPair worker = generate_key_pair(), master = generate_key_pair();
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[0], STDIN_FILENO);
    ::close(p[1]);
    const int log = ::open(f.path("worker.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const std::string cache = f.cache();
    ::execl(k_farm.c_str(), k_farm.c_str(), "worker", "--launched", "--connect", "tcp://127.0.0.1:9", "--cache",
            cache.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(p[0]);
  const std::string text = format_launch_secrets({worker.public_key, worker.secret_key, master.public_key});
  REQUIRE(::write(p[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int status = 0;
  CHECK(::waitpid(pid, &status, WNOHANG) == 0);  // still running: nothing ended the lifeline
  ::close(p[1]);
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    ended = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(ended);
  if (!ended) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream in(f.path("worker.log"));
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(log.find("the launcher's channel closed") != std::string::npos);
}

TEST_CASE("farm render --hosts: Ctrl-C stops the job (exit 1) and every worker") {
  Fixture f("launch_sigint", 2);
  const std::string stuck_farm = f.path("stuck_farm.sh");
  std::ofstream(stuck_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --hang-after 0\n";
  fs::permissions(stuck_farm, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "alpha threads=1 farm=" << stuck_farm << " cache=" << f.cache() << "\n";
  test_process::Child master(render_args(f, f.path("farm.png"), hosts), f.path("render.log"));
  REQUIRE(master.wait_for_log("hosts: 1 started, 1 joined", 30));
  master.kill(SIGINT);
  CHECK(master.wait(30) == 1);
  CHECK(master.log().find("interrupted: no image written") != std::string::npos);
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm render --hosts --key --allow: the user's own master key, and a worker started by hand joins too") {
  Fixture f("launch_own_keys", 8);
  REQUIRE(test_process::run({k_farm, "keygen", f.path("master")}, f.path("keygen1.log")) == 0);
  REQUIRE(test_process::run({k_farm, "keygen", f.path("node")}, f.path("keygen2.log")) == 0);
  // The launched host hangs on its first block: the job needs the hand-started worker to finish.
  const std::string stuck_farm = f.path("stuck_farm.sh");
  std::ofstream(stuck_farm) << "#!/bin/sh\nexec " << k_farm << " \"$@\" --hang-after 0\n";
  fs::permissions(stuck_farm, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "alpha threads=1 farm=" << stuck_farm << " cache=" << f.cache() << "\n";
  std::vector<std::string> args = render_args(f, f.path("farm.png"), hosts);
  args.insert(args.end(), {"--key", f.path("master.key"), "--allow", f.path("node.pub")});
  test_process::Child master(args, f.path("render.log"));
  REQUIRE(master.wait_for_log("workers connect to", 30));
  std::smatch m;
  const std::string log = master.log();
  REQUIRE(std::regex_search(log, m, std::regex("workers connect to (tcp://127\\.0\\.0\\.1:[0-9]+)")));
  auto by_hand = start_worker(f, m[1], "by-hand", {"--key", f.path("node.key"), "--master-key", f.path("master.pub")});
  CHECK(master.wait(120) == 0);
  CHECK(test_process::same_file(f.path("farm.png"), f.reference));
  CHECK(master.log().find("'by-hand' joined") != std::string::npos);
  CHECK(by_hand->wait(30) == 0);
  CHECK(none_left(f.cache()));
}

namespace {

// An ssh stand-in for the launcher's own steps, no worker behind it: `-G HOST` appends HOST to
// DIR/probes and then does `probe` (sh code); anything else appends its destination to
// DIR/launched and then does `launch`.
std::string write_scripted_ssh(const Fixture& f, const std::string& probe, const std::string& launch) {
  const std::string path = f.path("scripted_ssh.sh");
  std::ofstream(path) << "#!/bin/sh\n"
                      << "if [ \"$1\" = -G ]; then echo \"$2\" >> " << f.path("probes") << "; " << probe << "; exit 0; fi\n"
                      << "for a; do last=\"$dest\"; dest=\"$a\"; done\n"
                      << "echo \"$last\" >> " << f.path("launched") << "\n"
                      << launch << "\n";
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

std::string many_hosts(const Fixture& f, int n) {
  const std::string path = f.path("many_hosts.txt");
  std::ofstream out(path);
  for (int i = 1; i <= n; ++i) out << "node" << i << ".invalid\n";
  return path;
}

int lines_in(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("farm render --hosts: SIGTERM while ssh -G hangs ends the command within 1 s and launches nothing") {
  Fixture f("launch_probe_sigterm", 2);
  const std::string ssh = write_scripted_ssh(f, "exec sleep 30", "exec sleep 30");
  test_process::Child master({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", many_hosts(f, 3000),
                              "--ssh-command", ssh, "--no-journal"},
                             f.path("render.log"));
  for (int i = 0; i < 300 && lines_in(f.path("probes")) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(lines_in(f.path("probes")) > 0);
  const auto sent = std::chrono::steady_clock::now();
  master.kill(SIGTERM);
  CHECK(master.wait(10) == 1);
  CHECK(seconds_since(sent) < 1.0);
  CHECK(master.log().find("interrupted") != std::string::npos);
  CHECK_FALSE(fs::exists(f.path("launched")));  // no ssh was started for a worker
  CHECK(lines_in(f.path("probes")) <= 16);       // thousands of hosts, at most 16 probes
}

TEST_CASE("farm render --hosts: SIGTERM ends launched ssh processes with their children, even ones that ignore it") {
  // Found by the second adversarial pass: an ssh wrapper whose child (not exec'd) held the output
  // pipe, or that trapped SIGTERM, kept the render 30 s after the signal: only the wrapper was
  // killed, and the reader of its output waited for the child. Now the whole process group.
  Fixture f("launch_stop_group", 2);
  const std::string ssh = write_scripted_ssh(f, "exit 0", "trap '' TERM INT HUP; sleep 30; true");
  const std::string hosts = f.path("two_hosts.txt");
  std::ofstream(hosts) << "node1.invalid\nnode2.invalid\n";
  test_process::Child master({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", hosts, "--ssh-command",
                              ssh, "--advertise", "127.0.0.1", "--no-journal"},
                             f.path("render.log"));
  for (int i = 0; i < 1500 && lines_in(f.path("launched")) < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(lines_in(f.path("launched")) == 2);
  const auto sent = std::chrono::steady_clock::now();
  master.kill(SIGTERM);
  CHECK(master.wait(40) == 1);
  CHECK(seconds_since(sent) < 8);  // 2 s for the lifeline, 2 s after SIGTERM, then SIGKILL
}

TEST_CASE("farm render --hosts: SIGTERM while thousands of hosts start: no ssh is started after it") {
  Fixture f("launch_start_sigterm", 2);
  const std::string ssh = write_scripted_ssh(f, "exit 0", "exec sleep 30");
  test_process::Child master({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", many_hosts(f, 3000),
                              "--ssh-command", ssh, "--advertise", "127.0.0.1", "--no-journal"},
                             f.path("render.log"));
  for (int i = 0; i < 1500 && lines_in(f.path("launched")) < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(lines_in(f.path("launched")) >= 3);
  const auto sent = std::chrono::steady_clock::now();
  master.kill(SIGTERM);
  REQUIRE(master.wait_for_log("hosts: interrupted after starting", 1.0));
  CHECK(seconds_since(sent) < 1.0);
  // The started ones ignore their lifeline (sleep): 2 s of grace, then SIGTERM.
  CHECK(master.wait(10) == 1);
  CHECK(seconds_since(sent) < 6);
  const int launched = lines_in(f.path("launched"));
  CHECK(launched < 3000);
  std::smatch m;
  const std::string log = master.log();
  REQUIRE(std::regex_search(log, m, std::regex("interrupted after starting ([0-9]+) of 3000")));
  CHECK(std::stoi(m[1]) >= launched - 1);  // at most the one being started when it came
}

TEST_CASE("farm render --hosts: ssh -G probes run at once and in bounded time, not one by one per host") {
  Fixture f("launch_probe_bounded", 2);
  // Each probe takes 2 s and names an unroutable host: in series, 16 probes would take 32 s
  // (and one per host, as before, 40 x 2 s).
  const std::string ssh = write_scripted_ssh(f, "sleep 2; echo hostname \"$2\"", "echo 'ssh: connect: refused' >&2; exit 255");
  test_process::Child master({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", many_hosts(f, 40),
                              "--ssh-command", ssh, "--no-journal"},
                             f.path("render.log"));
  for (int i = 0; i < 1500 && lines_in(f.path("probes")) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto probing = std::chrono::steady_clock::now();
  REQUIRE(master.wait_for_log("workers connect to tcp://", 60));
  CHECK(seconds_since(probing) < 10);  // 2 s and the machine's load
  CHECK(lines_in(f.path("probes")) == 16);
  CHECK(master.wait(120) == 1);  // every launch "fails": the stand-in has no worker
  CHECK(lines_in(f.path("launched")) == 40);
  // Every host's fate in the closing summary.
  const std::string text = master.log();
  CHECK(text.find("what became of each host:") != std::string::npos);
  CHECK(text.find("  node40.invalid: failed: ssh failed: ssh: connect: refused") != std::string::npos);
}

TEST_CASE("farm render --hosts: a probe that never answers is given up after a bounded time, with a message") {
  Fixture f("launch_probe_hang", 2);
  const std::string ssh = write_scripted_ssh(f, "exec sleep 60", "echo 'ssh: connect: refused' >&2; exit 255");
  const auto start = std::chrono::steady_clock::now();
  const std::string log = f.path("render.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", many_hosts(f, 2),
                           "--ssh-command", ssh, "--no-journal"},
                          log, 60) == 1);
  CHECK(seconds_since(start) < 20);  // 5 s and the machine's load
  CHECK(read_text(log).find("warning: ssh -G gave no answer in 5 s for 2 host(s) (first: node1.invalid)") !=
        std::string::npos);
}

TEST_CASE("farm render --hosts: a lone ssh that hangs is reported after --join-timeout and the command ends") {
  Fixture f("launch_join_timeout", 2);
  const std::string ssh = write_scripted_ssh(f, "echo hostname \"$2\"", "echo 'connecting...' >&2; exec sleep 60");
  const auto start = std::chrono::steady_clock::now();
  const std::string log = f.path("render.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", many_hosts(f, 1),
                           "--ssh-command", ssh, "--advertise", "127.0.0.1", "--no-journal", "--join-timeout", "1"},
                          log, 60) == 1);
  CHECK(seconds_since(start) < 20);  // 1 s and the machine's load
  const std::string text = read_text(log);
  CHECK(text.find("error: host node1.invalid: no worker joined within 1 s of starting ssh") != std::string::npos);
  CHECK(text.find("connecting...") != std::string::npos);  // its last words
  CHECK(text.find("no host is running a worker any more") != std::string::npos);
}

TEST_CASE("farm render --hosts: --ssh-command runs without a shell, a missing ssh program is a usage error") {
  Fixture f("launch_ssh_command", 2);
  const std::string hosts = many_hosts(f, 1);
  const std::string marker = f.path("injected");
  // A ';' is one more word for ssh, never a second command (through /bin/sh, as the probe ran
  // it before, this touched the marker).
  const std::string ssh = write_scripted_ssh(f, "echo hostname \"$2\"", "echo 'ssh: refused' >&2; exit 255");
  const std::string log1 = f.path("render1.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", hosts, "--ssh-command",
                           ssh + " ;touch " + marker + ";", "--no-journal"},
                          log1, 60) == 1);
  CHECK_FALSE(fs::exists(marker));
  const std::string log2 = f.path("render2.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", hosts, "--ssh-command",
                           "/nonexistent/ssh -F cfg", "--no-journal"},
                          log2, 60) == 2);
  CHECK(read_text(log2).find("error: --ssh-command: cannot run '/nonexistent/ssh': No such file or directory") !=
        std::string::npos);
  const std::string log3 = f.path("render3.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", hosts, "--ssh-command",
                           "no-such-ssh-program", "--advertise", "127.0.0.1", "--no-journal"},
                          log3, 60) == 2);
  CHECK(read_text(log3).find("error: --ssh-command: cannot run 'no-such-ssh-program': not found in PATH") !=
        std::string::npos);
}

TEST_CASE("farm render --slurm: a bad SLURM_CPUS_PER_TASK or SLURM_NTASKS is a usage error before anything starts") {
  Fixture f("launch_slurm_env", 2);
  auto run_with = [&](const std::string& assignment, const std::string& log) {
    return test_process::run({"/usr/bin/env", "SLURM_JOB_ID=1", assignment, k_farm, "render", f.scene, "-o",
                              f.path("farm.png"), "--slurm", "--no-journal"},
                             log, 60);
  };
  CHECK(run_with("SLURM_CPUS_PER_TASK=abc", f.path("cpus.log")) == 2);
  CHECK(read_text(f.path("cpus.log")).find("error: --slurm: SLURM_CPUS_PER_TASK='abc' is not a whole number from 1 to 4096") !=
        std::string::npos);
  CHECK(run_with("SLURM_NTASKS=0", f.path("tasks.log")) == 2);
  CHECK(read_text(f.path("tasks.log")).find("error: --slurm: SLURM_NTASKS='0' is not a whole number") != std::string::npos);
  CHECK(read_text(f.path("tasks.log")).find("srun") == std::string::npos);
}

TEST_CASE("farm render --slurm-relay without --slurm is a usage error naming what it needs, before anything starts") {
  Fixture f("launch_slurm_relay_alone", 2);
  const std::string log = f.path("render.log");
  CHECK(test_process::run({"/usr/bin/env", "SLURM_JOB_ID=1", k_farm, "render", f.scene, "-o", f.path("farm.png"),
                           "--slurm-relay", "--no-journal"},
                          log, 60) == 2);
  CHECK_MESSAGE(read_text(log).find("--slurm-relay requires --slurm") != std::string::npos, read_text(log));
  CHECK(read_text(log).find("srun") == std::string::npos);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
}

TEST_CASE("farm render --slurm: an srun that cannot be run is reported as a failed launch and the job ends (exit 1)") {
  Fixture f("launch_slurm_no_srun", 2);
  const std::string log = f.path("render.log");
  const std::string empty_path = f.path("no_bin");
  fs::create_directories(empty_path);
  CHECK(test_process::run({"/usr/bin/env", "SLURM_JOB_ID=1", "PATH=" + empty_path, k_farm, "render", f.scene, "-o",
                           f.path("farm.png"), "--slurm", "--no-journal"},
                          log, 60) == 1);
  const std::string text = read_text(log);
  CHECK_MESSAGE(text.find("slurm job 1: cannot start: cannot run 'srun'") != std::string::npos, text);
  CHECK(text.find("slurm: started") == std::string::npos);  // nothing claims tasks were started
  CHECK(text.find("no host is running a worker") != std::string::npos);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
}

TEST_CASE("farm worker --fallback without --launched is a usage error: a worker started by hand has no key to pin") {
  Fixture f("launch_fallback_alone", 2);
  const std::string log = f.path("worker.log");
  CHECK(test_process::run({k_farm, "worker", "--connect", "tcp://127.0.0.1:9", "--fallback", "tcp://127.0.0.1:10",
                           "--once"},
                          log, 30) == 2);
  CHECK_MESSAGE(read_text(log).find("--fallback is for a worker that `farm render` launched behind a relay") !=
                    std::string::npos,
                read_text(log));
}

TEST_SUITE_END();
