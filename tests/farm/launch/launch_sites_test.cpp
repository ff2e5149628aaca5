// `farm relay --launched` on its own, as `farm render --hosts` starts it for a site: its keys
// on standard input, the line that says where it listens, its lifeline, and bad input refused.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"
#include "security/curve_keys.h"
#include "security/launch_secrets.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
using launched_workers::read_text;

namespace {
bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
}  // namespace

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

TEST_CASE("farm relay --launched: keys on standard input, says where it listens, the end of standard input stops it") {
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
