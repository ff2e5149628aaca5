// Exit codes on SIGTERM and SIGINT (docs/failures.md, "Signals"): the commands that own a job's
// output exit 1 when stopped (it was not written); a worker or a relay stops as asked and exits
// 0, saying so, since `farm render`, the launcher and service managers stop them that way once a
// job is done; and a `farm render` whose local workers it stops after the job exits 0 with no
// error line (cli/farm_commands.cpp).
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

const std::string k_no_master = "tcp://127.0.0.1:1";  // nothing listens on port 1

// Whether process `pid` runs the farm (exec'd: before, the fork holds the test's own handlers)
// and catches SIGINT and SIGTERM (SigCgt in /proc/PID/status): a signal sent before would end
// it by the default action, which is not what is tested.
bool catches_stop_signals(pid_t pid) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string argv0;
  if (!std::getline(cmdline, argv0, '\0') || argv0 != k_farm) return false;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const unsigned long long caught = std::stoull(line.substr(7), nullptr, 16);
    return (caught >> (SIGINT - 1) & 1) && (caught >> (SIGTERM - 1) & 1);
  }
  return false;
}

// Starts `args`, waits until its log shows `ready` and it catches the stop signals, sends
// `sig`, and returns its exit code and log.
std::pair<int, std::string> stopped_by(const std::vector<std::string>& args, const std::string& log, const std::string& ready,
                                       int sig) {
  Child child(args, log);
  REQUIRE_MESSAGE(child.wait_for_log(ready, 20), child.log());
  bool caught = false;
  for (int i = 0; i < 2000 && !(caught = catches_stop_signals(child.pid())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE_MESSAGE(caught, child.log());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // into its loop
  child.kill(sig);
  const int code = child.wait(10);
  return {code, child.log()};
}

}  // namespace

TEST_CASE("signals: a worker stopped by SIGTERM or SIGINT exits 0 and says so") {
  const fs::path dir = test_paths::temp_dir("signal_worker");
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const auto stopped = stopped_by({k_farm, "worker", "--connect", k_no_master, "--name", "w", "--cache", (dir / "cache").string()},
                                    (dir / "worker.log").string(), "", sig);
    const int code = stopped.first;  // not structured bindings: CHECK_MESSAGE's lambda takes them
    const std::string& log = stopped.second;
    CHECK_MESSAGE(code == 0, log);
    CHECK_MESSAGE(log.find(sig == SIGTERM ? "the worker stopped on SIGTERM" : "the worker stopped on SIGINT (Ctrl-C)") !=
                      std::string::npos,
                  log);
    CHECK_MESSAGE(log.find("error:") == std::string::npos, log);
  }
  fs::remove_all(dir);
}

TEST_CASE("signals: a relay stopped by SIGTERM or SIGINT exits 0 and says so") {
  const fs::path dir = test_paths::temp_dir("signal_relay");
  for (int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const auto stopped = stopped_by({k_farm, "relay", "--connect", k_no_master, "--bind", "tcp://127.0.0.1:*", "--cache",
                                   (dir / "cache").string()},
                                    (dir / "relay.log").string(), "relay listening on", sig);
    const int code = stopped.first;
    const std::string& log = stopped.second;
    CHECK_MESSAGE(code == 0, log);
    CHECK_MESSAGE(log.find(sig == SIGTERM ? "the relay stopped on SIGTERM" : "the relay stopped on SIGINT (Ctrl-C)") !=
                      std::string::npos,
                  log);
    CHECK_MESSAGE(log.find("error:") == std::string::npos, log);
  }
  fs::remove_all(dir);
}

TEST_CASE("signals: a master stopped by SIGINT exits 1, as by SIGTERM") {
  Fixture f("signal_master");
  auto master = start_master(f, f.path("out.png"), {"--no-journal"});
  master->kill(SIGINT);
  CHECK_MESSAGE(master->wait(10) == 1, master->log());
  CHECK(master->log().find("error: interrupted") != std::string::npos);
}

TEST_CASE("signals: farm render stops its local workers after the job and exits 0, reporting no failure") {
  Fixture f("signal_render", 2);
  const std::string out = f.path("farm.png");
  const std::string log = f.path("render.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", out, "--workers", "2", "--threads", "1", "--no-journal"}, log,
                          120) == 0);
  CHECK(test_process::same_file(out, f.reference));
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(text.find("error:") == std::string::npos, text);
  CHECK_MESSAGE(text.find("interrupted") == std::string::npos, text);
}

TEST_SUITE_END();
