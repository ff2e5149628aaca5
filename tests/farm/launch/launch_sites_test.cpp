// `farm render --hosts` with sites (host file `site=NAME`, launch/site_relays.h): a relay per
// site on its first host with the site's workers behind it; a relay that cannot start or says
// nothing (its site goes straight to the master) or dies mid-render; and `farm relay --launched`
// on its own. Through the ssh stand-in of
// launch_test.cpp, which runs the remote command here: the hosts are loopback addresses
// (127.0.0.2, ...), so a site's workers reach its relay at "the host's name as written".
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"
#include "security/curve_keys.h"
#include "security/launch_secrets.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
using launched_workers::none_left;
using launched_workers::read_text;

namespace {

std::string write_fake_ssh(const Fixture& f) { return launched_workers::write_fake_ssh(f.path("fake_ssh.sh")); }

// Fixed 8x8 blocks: dozens of them, so every participant that joins gets some.
std::vector<std::string> render_args(const Fixture& f, const std::string& out, const std::string& hosts) {
  return {k_farm,
          "render",
          f.scene,
          "-o",
          out,
          "--hosts",
          hosts,
          "--ssh-command",
          write_fake_ssh(f),
          "--advertise",
          "127.0.0.1",
          "--no-journal",
          "--policy",
          "fixed",
          "--block",
          "8"};
}

// The "site_workers" of the participant named `name` in a stats JSON, -1 if it is not there.
int site_workers_of(const std::string& stats, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(stats, m,
                         std::regex("\"name\": \"" + name + "\", \"threads\": [0-9]+, \"site_workers\": ([0-9]+)")))
    return -1;
  return std::stoi(m[1]);
}

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE(
    "farm render --hosts: two sites behind a relay each and a plain host, byte-identical to single, nothing left "
    "running") {
  // Seconds of work (5 s on one thread): every site's relay joins well before the end.
  Fixture f("launch_sites", 4096);
  const std::string hosts = f.path("hosts.txt"), cache = " cache=" + f.cache();
  std::ofstream(hosts) << "127.0.0.2 threads=1 site=labA" << cache << "\n"
                       << "127.0.0.3 threads=1 site=labA" << cache << "\n"
                       << "127.0.0.4 threads=1 site=labB" << cache << "\n"
                       << "127.0.0.5 threads=1 site=labB" << cache << "\n"
                       << "127.0.0.6 threads=1" << cache << "\n";
  const std::string out = f.path("farm.png"), log = f.path("render.log"), stats = f.path("stats.json");
  std::vector<std::string> args = render_args(f, out, hosts);
  args.insert(args.end(), {"--stats", stats});
  CHECK(test_process::run(args, log, 120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = read_text(log);
  INFO(text);
  // Each relay bound on its site's first host; the site's workers went to it there.
  CHECK(
      std::regex_search(text, std::regex("relay of site labA on 127\\.0\\.0\\.2: listening, its site's workers connect "
                                         "to tcp://127\\.0\\.0\\.2:[0-9]+")));
  CHECK(
      std::regex_search(text, std::regex("relay of site labB on 127\\.0\\.0\\.4: listening, its site's workers connect "
                                         "to tcp://127\\.0\\.0\\.4:[0-9]+")));
  CHECK(has(text, "hosts: started 5 worker(s) and 2 relay(s)"));
  CHECK(has(text, "hosts: 5 started, 2 relays, "));
  // The master saw one participant per site; the site workers joined the relays, not the master.
  CHECK(std::regex_search(text, std::regex("relay [0-9]+ 'labA' joined for a site of")));
  CHECK(std::regex_search(text, std::regex("relay [0-9]+ 'labB' joined for a site of")));
  CHECK(has(text, "farm-relay-site-worker joined 127.0.0.2"));
  CHECK(has(text, "farm-relay-site-worker joined 127.0.0.5"));
  CHECK_FALSE(std::regex_search(text, std::regex("(^|\n)info: worker [0-9]+ '127\\.0\\.0\\.[2-5]' joined")));
  CHECK(std::regex_search(text, std::regex("(^|\n)info: worker [0-9]+ '127\\.0\\.0\\.6' joined")));
  const std::string json = read_text(stats);
  CHECK(site_workers_of(json, "labA") > 0);
  CHECK(site_workers_of(json, "labB") > 0);
  // The closing summary: a line for each relay, the site workers' route.
  CHECK(has(text, "what became of each host and relay:"));
  CHECK(std::regex_search(
      text, std::regex("  relay of site labA on 127\\.0\\.0\\.2: listened on tcp://127\\.0\\.0\\.2:[0-9]+, "
                       "[12] site worker\\(s\\) joined it; joined the job, in it to the end")));
  CHECK(has(text, "(through the relay of site labB)"));
  CHECK_FALSE(has(text, ": failed: "));
  CHECK(none_left(f.cache()));
}

TEST_CASE(
    "farm render --hosts: a site whose relay cannot start is reported once and its other worker renders straight to "
    "the master") {
  Fixture f("launch_site_no_relay", 2);
  const std::string hosts = f.path("hosts.txt"), cache = " cache=" + f.cache();
  std::ofstream(hosts) << "127.0.0.2 threads=1 site=labA farm=/nonexistent/farm" << cache << "\n"
                       << "127.0.0.3 threads=1 site=labA" << cache << "\n";
  const std::string out = f.path("farm.png"), log = f.path("render.log");
  CHECK(test_process::run(render_args(f, out, hosts), log, 120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = read_text(log);
  INFO(text);
  const std::string reported = "error: the relay of site labA on 127.0.0.2: the farm binary was not found there";
  CHECK(has(text, reported));
  CHECK(text.find(reported) == text.rfind(reported));  // once
  CHECK(has(text, "its site's workers connect to the master directly"));
  CHECK(has(text, "error: host 127.0.0.2: the farm binary was not found there"));  // its worker too
  CHECK(std::regex_search(text, std::regex("worker [0-9]+ '127\\.0\\.0\\.3' joined")));
  CHECK(has(text, "  127.0.0.3: joined, in the job to the end (straight to the master: its site's relay failed)"));
  CHECK(has(text, "  relay of site labA on 127.0.0.2: failed: the farm binary was not found there"));
  CHECK(none_left(f.cache()));
}

TEST_CASE(
    "farm render --hosts: a relay that never says where it listens is given up after --join-timeout, its site goes to "
    "the master") {
  Fixture f("launch_site_silent_relay", 2);
  // On the site's first host a farm whose relay hangs without a word (this script, still
  // running with the relay's command line, is what none_left looks for); its worker is a real one.
  const std::string silent_relay = f.path("silent_relay.sh");
  std::ofstream(silent_relay) << "#!/bin/sh\nif [ \"$1\" = relay ]; then sleep 60; exit 0; fi\nexec " << k_farm
                              << " \"$@\"\n";
  fs::permissions(silent_relay, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt"), cache = " cache=" + f.cache();
  std::ofstream(hosts) << "127.0.0.2 threads=1 site=labA farm=" << silent_relay << cache << "\n"
                       << "127.0.0.3 threads=1 site=labA" << cache << "\n";
  const std::string out = f.path("farm.png"), log = f.path("render.log");
  std::vector<std::string> args = render_args(f, out, hosts);
  args.insert(args.end(), {"--join-timeout", "4"});
  const auto start = std::chrono::steady_clock::now();
  CHECK(test_process::run(args, log, 120) == 0);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 30);
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = read_text(log);
  INFO(text);
  CHECK(has(text,
            "error: the relay of site labA on 127.0.0.2: it did not say where it listens within 4 s of starting "
            "ssh (--join-timeout)"));
  // Both went to the master (the first to join may render the whole small job alone).
  CHECK(std::regex_search(text, std::regex("(^|\n)info: worker [0-9]+ '127\\.0\\.0\\.[23]' joined")));
  CHECK(std::regex_search(
      text, std::regex("  127\\.0\\.0\\.2: [^\n]*\\(straight to the master: its site's relay failed\\)")));
  CHECK(std::regex_search(
      text, std::regex("  127\\.0\\.0\\.3: [^\n]*\\(straight to the master: its site's relay failed\\)")));
  CHECK(none_left(f.cache()));  // the relay's stand-in too: it was ended with its ssh
}

TEST_CASE(
    "farm render --hosts: a site's relay killed mid-render is reported, its site workers join the master directly, "
    "the image is exact") {
  // ~12 s of rendering on one thread: the relay, killed 3 s after it starts, surely holds blocks
  // and its two site workers are mid-render. No other worker is in the job: it finishes only if
  // they fall back to the master (--fallback) and the master takes back what the relay held.
  Fixture f("launch_site_relay_dies", 6000);
  const std::string dying = f.path("dying_relay.sh");
  // (A background command's standard input is /dev/null unless it is given another descriptor.)
  std::ofstream(dying) << "#!/bin/sh\nif [ \"$1\" = relay ]; then\n  exec 3<&0\n  " << k_farm
                       << " \"$@\" <&3 &\n  sleep 3; kill -9 $!; exit 1\nfi\nexec " << k_farm << " \"$@\"\n";
  fs::permissions(dying, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt"), cache = " cache=" + f.cache();
  std::ofstream(hosts) << "127.0.0.2 threads=1 site=labA farm=" << dying << cache << "\n"
                       << "127.0.0.3 threads=1 site=labA farm=" << dying << cache << "\n";
  const std::string out = f.path("farm.png"), log = f.path("render.log");
  REQUIRE(test_process::run(render_args(f, out, hosts), log, 120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = read_text(log);
  INFO(text);
  CHECK(std::regex_search(text, std::regex("relay [0-9]+ 'labA' joined for a site of")));
  CHECK(has(text, "error: the relay of site labA on 127.0.0.2: the relay exited with code 1: "));
  CHECK(has(text, "its site's workers join the master directly"));
  // Out of the job while they fall back, not lost; then both in it again, at the master.
  CHECK(has(text, "hosts: 2 started, 1 relay, 0 joined, 0 lost, 1 failed"));
  CHECK(has(text, "hosts: 2 started, 1 relay, 2 joined, 0 lost, 1 failed"));
  for (const char* host : {"127.0.0.2", "127.0.0.3"}) {
    CAPTURE(host);
    CHECK(std::regex_search(text, std::regex(std::string("\\[") + host +
                                             "\\] warning: the relay at tcp://127\\.0\\.0\\.2:[0-9]+ is silent: "
                                             "joining the master at tcp://127\\.0\\.0\\.1:[0-9]+ instead")));
    CHECK(has(text, std::string("  ") + host +
                        ": joined, in the job to the end (through the relay of site labA, then straight to the master: "
                        "the relay ended)"));
  }
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm render --hosts: a relay stopped for 7 s keeps its site workers: they reconnect to it, not to the master") {
  // A relay busy for a while (here SIGSTOP, as a long file store or a swapping host would look)
  // is silent past a master's liveness, but its workers fall back only after three such periods.
  Fixture f("launch_site_relay_pauses", 6000);
  const std::string hosts = f.path("hosts.txt"), cache = " cache=" + f.cache();
  // A site name no other test uses: tests run side by side, and the relay is found by it.
  std::ofstream(hosts) << "127.0.0.2 threads=1 site=pausedSite" << cache << "\n"
                       << "127.0.0.3 threads=1 site=pausedSite" << cache << "\n";
  const std::string out = f.path("farm.png");
  test_process::Child render(render_args(f, out, hosts), f.path("render.log"));
  REQUIRE(render.wait_for_log("hosts: 2 started, 1 relay, 2 joined", 60));
  std::string found;
  REQUIRE(launched_workers::count(" --name pausedSite ", &found) == 1);
  const pid_t relay = std::stoi(found.substr(0, found.find(':')));
  REQUIRE(::kill(relay, SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(7));
  REQUIRE(::kill(relay, SIGCONT) == 0);
  CHECK(render.wait(120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  const std::string text = render.log();
  INFO(text);
  CHECK(has(text, "warning: relay silent for "));  // they noticed, and reconnected to it
  CHECK_FALSE(has(text, "joining the master at"));
  CHECK(none_left(f.cache()));
}

TEST_CASE("farm render --hosts: SIGTERM while the relays are awaited ends the command, and no worker is started") {
  Fixture f("launch_site_sigterm", 2);
  // An ssh that records each destination it is asked for and then hangs: the relay never says
  // where it listens, so the launcher waits for it (--join-timeout 60).
  const std::string ssh = f.path("hanging_ssh.sh"), launched = f.path("launched");
  std::ofstream(ssh) << "#!/bin/sh\nfor a; do last=\"$dest\"; dest=\"$a\"; done\necho \"$last\" >> " << launched
                     << "\nexec sleep 30\n";
  fs::permissions(ssh, fs::perms::owner_all);
  const std::string hosts = f.path("hosts.txt");
  std::ofstream(hosts) << "node1.invalid site=lab\nnode2.invalid site=lab\n";
  Child master({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--hosts", hosts, "--ssh-command", ssh,
                "--advertise", "127.0.0.1", "--no-journal"},
               f.path("render.log"));
  for (int i = 0; i < 1500 && read_text(launched).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(read_text(launched) == "node1.invalid\n");  // the relay's ssh, on the site's first host
  const auto sent = std::chrono::steady_clock::now();
  master.kill(SIGTERM);
  REQUIRE(master.wait_for_log("hosts: interrupted after starting 0 of 2", 2.0));
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count() < 1.0);
  // The relay's ssh ignores its lifeline (sleep): 2 s of grace, then SIGTERM.
  CHECK(master.wait(10) == 1);
  CHECK(has(master.log(), "interrupted"));
  CHECK(read_text(launched) == "node1.invalid\n");  // no worker's ssh was started
}

namespace {

// A `farm relay --launched` child with its standard input on a pipe (returned in `lifeline`)
// and its output in `log`.
pid_t start_launched_relay(const Fixture& f, const std::string& log, int& lifeline) {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[0], STDIN_FILENO);
    ::close(p[1]);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    const std::string cache = f.cache();
    ::execl(k_farm.c_str(), k_farm.c_str(), "relay", "--launched", "--connect", "tcp://127.0.0.1:9", "--bind",
            "tcp://*:0", "--cache", cache.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(p[0]);
  lifeline = p[1];
  return pid;
}

// Its exit code within `seconds`, or -1 (then it is killed).
int wait_exit(pid_t pid, double seconds) {
  int status = 0;
  for (double t = 0; t < seconds; t += 0.05) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

}  // namespace

TEST_CASE(
    "farm relay --launched: keys on standard input, says its host and where it listens, the end of standard input "
    "stops it") {
  Fixture f("launch_relay_lifeline", 2);
  using namespace farm::security;
  CurveKeyPair relay = generate_key_pair(), master = generate_key_pair(), worker = generate_key_pair();
  int lifeline = -1;
  const std::string log = f.path("relay.log");
  const pid_t pid = start_launched_relay(f, log, lifeline);
  const std::string text =
      format_relay_launch_secrets({{relay.public_key, relay.secret_key, master.public_key}, {worker.public_key}});
  REQUIRE(::write(lifeline, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  bool bound = false;
  for (int i = 0; i < 200 && !bound; ++i) {
    bound = std::regex_search(read_text(log), std::regex("(^|\n)farm-relay-bound tcp://0\\.0\\.0\\.0:[0-9]+\n"));
    if (!bound) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK_MESSAGE(bound, read_text(log));
  // Its host name just before: what a launcher that did not pick the host (srun) points workers at.
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK_MESSAGE(has(read_text(log), std::string("farm-relay-host ") + host + "\nfarm-relay-bound tcp://"), read_text(log));
  int status = 0;
  CHECK(::waitpid(pid, &status, WNOHANG) == 0);  // still running: nothing ended the lifeline
  ::close(lifeline);
  CHECK(wait_exit(pid, 5) == 1);
  CHECK(has(read_text(log), "the launcher's channel closed"));
}

TEST_CASE(
    "farm relay --launched: a worker's secrets, keys on the command line, or no secrets at all are refused (exit 2)") {
  Fixture f("launch_relay_bad_input", 2);
  using namespace farm::security;
  CurveKeyPair worker = generate_key_pair(), master = generate_key_pair();
  int lifeline = -1;
  const std::string log = f.path("relay.log");
  const pid_t pid = start_launched_relay(f, log, lifeline);
  const std::string text = format_launch_secrets({worker.public_key, worker.secret_key, master.public_key});
  REQUIRE(::write(lifeline, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  CHECK(wait_exit(pid, 10) == 2);
  ::close(lifeline);
  CHECK(has(read_text(log), "does not start with 'farm-relay-launch-secrets 1'"));
  CHECK_FALSE(has(read_text(log), "farm-relay-bound"));

  const pid_t early = start_launched_relay(f, log, lifeline);
  ::close(lifeline);  // nothing at all
  CHECK(wait_exit(early, 10) == 2);
  CHECK(has(read_text(log), "launch secrets on standard input ended at line 1"));

  CHECK(test_process::run({k_farm, "relay", "--launched", "--connect", "tcp://127.0.0.1:9", "--bind", "tcp://*:0",
                           "--key", f.path("none.key")},
                          f.path("flags.log"), 20) == 2);
  CHECK(has(read_text(f.path("flags.log")), "--launched reads the relay's keys from standard input"));
}

TEST_SUITE_END();
