// The farm under faults, over tcp://127.0.0.1 with ephemeral ports: workers killed, stopped past
// the liveness limit, restarted, and linked through the fault-injecting proxy
// (tools/net/delay_proxy.py): every block is committed exactly once. CI-sized; FARM_CHAOS_SEED
// changes the run (tools/chaos.py runs the longer version). Malformed messages are in
// chaos_flood_test.cpp.
#include <doctest/doctest.h>

#include <regex>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <map>
#include <random>

#include "test_paths.h"
#include "farm/chaos_support.h"
#include "farm/process.h"

TEST_SUITE_BEGIN("integration");

namespace {

using namespace chaos_support;

// tools/net/delay_proxy.py in front of `target` (tcp://host:port); its endpoint in `endpoint`.
std::unique_ptr<Child> start_proxy(const std::string& target, const std::vector<std::string>& faults, const std::string& log,
                                   std::string& endpoint) {
  std::vector<std::string> args = {"/usr/bin/python3", test_paths::project("tools/net/delay_proxy.py"), "--listen",
                                   "127.0.0.1:0", "--target", target.substr(std::string("tcp://").size())};
  args.insert(args.end(), faults.begin(), faults.end());
  auto proxy = std::make_unique<Child>(args, log);
  REQUIRE(proxy->wait_for_log("listening on", 20));
  endpoint = "tcp://" + find(proxy->log(), "listening on ([0-9.]+:[0-9]+)");
  return proxy;
}

bool no_children_left() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace

TEST_CASE("chaos: workers killed, stopped, restarted and behind a faulty proxy, every block committed once" * doctest::test_suite("slow")) {
  const uint32_t seed = static_cast<uint32_t>(env_or("FARM_CHAOS_SEED", 2026));
  Fixture f("chaos_faults", 6000, ".png");
  const std::string out = f.path("farm.png"), stats = f.path("stats.json"), fault_log = f.path("faults.log");
  std::ofstream faults(fault_log);
  const auto t0 = Clock::now();
  auto note = [&](const std::string& what) {
    faults << std::fixed << std::setprecision(2) << seconds_since(t0) << " s " << what << "\n" << std::flush;
  };
  // Liveness 0.2 s x 3 = 0.6 s: a stop of 1 s or more is a death.
  const std::vector<std::string> master_args = {"--block", "8",     "--heartbeat", "0.2",    "--liveness", "3",
                                                "--stats", stats, "--keep-journal", "--resume"};
  auto master = start_master(f, out, f.path("master.log"), master_args);
  const std::string ep = endpoint_from(*master);
  // Two workers direct, two through the proxy: one only slow, one with spikes, resets and stalls.
  std::string calm_ep, faulty_ep;
  auto calm = start_proxy(ep, {"--delay-ms", "2", "--jitter-ms", "1"}, f.path("proxy_calm.log"), calm_ep);
  auto faulty = start_proxy(ep,
                            {"--delay-ms", "1", "--spike-prob", "0.02", "--spike-ms", "300", "--reset-rate", "0.4",
                             "--stall-rate", "0.3", "--stall-s", "1.0", "--seed", std::to_string(seed)},
                            f.path("proxy_faulty.log"), faulty_ep);
  struct Slot {
    std::string endpoint, name;
    std::unique_ptr<Child> child;
    int generation = 0;
    double cont_at = -1;  // SIGSTOPped until then
  };
  std::vector<Slot> slots(4);
  const std::pair<std::string, std::string> where[] = {{ep, "direct-a"}, {ep, "direct-b"}, {calm_ep, "calm"}, {faulty_ep, "faulty"}};
  for (size_t i = 0; i < slots.size(); ++i) std::tie(slots[i].endpoint, slots[i].name) = where[i];
  auto launch = [&](Slot& s) {
    s.child = start_worker(f, s.endpoint, s.name + "-" + std::to_string(s.generation++));
  };
  for (Slot& s : slots) launch(s);

  std::mt19937 rng(seed);
  std::map<std::string, int> injected;
  double next_fault = 1.0;
  // Faults during the first k_chaos_seconds; afterwards the farm must finish on its own. The
  // master's "done in" line says it has finished (Child::wait would kill a running child).
  constexpr double k_chaos_seconds = 15, k_limit_seconds = 60;
  auto finished = [&] {
    std::string log = master->log();
    return log.find("info: done in ") != std::string::npos || log.find("no image written") != std::string::npos ||
           log.find("master failed") != std::string::npos;
  };
  while (!finished() && seconds_since(t0) < k_limit_seconds) {
    const double t = seconds_since(t0);
    for (Slot& s : slots) {
      if (s.cont_at >= 0 && t >= s.cont_at) {
        s.child->kill(SIGCONT);
        s.cont_at = -1;
        note("SIGCONT " + s.name);
      }
    }
    // Once some block is committed (a loaded machine may have none at 5 s): the resumed master
    // must then take those over.
    if (t >= 5 && injected["master"] == 0 && std::regex_search(master->log(), std::regex("[1-9][0-9]* blocks done"))) {
      // The master itself, once: kill -9, then the same command with --resume on the same port,
      // so that workers and proxies find it again. Its journal carries the blocks across.
      master->kill(SIGKILL);
      note("SIGKILL master, restarted with --resume");
      master = start_master(f, out, f.path("master2.log"), master_args, ep);
      ++injected["master"];
    }
    if (t >= next_fault && t < k_chaos_seconds) {
      Slot& s = slots[rng() % slots.size()];
      const unsigned kind = rng() % 3;
      if (s.cont_at < 0) {
        if (kind == 0) {
          s.child->kill(SIGKILL);
          note("SIGKILL " + s.name + ", restarted");
          launch(s);
          ++injected["kill"];
        } else if (kind == 1) {
          s.child->kill(SIGSTOP);
          s.cont_at = t + 1.0 + (rng() % 600) / 1000.0;  // past the 0.6 s liveness limit
          note("SIGSTOP " + s.name);
          ++injected["stop"];
        } else {
          s.child->kill(SIGTERM);
          s.child->wait(5);
          note("SIGTERM " + s.name + ", restarted");
          launch(s);
          ++injected["restart"];
        }
      }
      next_fault = t + 0.4 + (rng() % 500) / 1000.0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A stopped worker would never exit: continue them all before the end.
  for (Slot& s : slots) {
    if (s.cont_at >= 0) {
      s.child->kill(SIGCONT);
      note("SIGCONT " + s.name + " (end)");
    }
  }
  const int master_code = master->wait(10);
  const double total = seconds_since(t0);
  note("master exited with " + std::to_string(master_code));
  faults.close();
  const std::string proxy_log = faulty->log();
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = proxy_log.find(what); p != std::string::npos; p = proxy_log.find(what, p + 1)) ++n;
    return n;
  };
  MESSAGE("seed " << seed << ": " << injected["kill"] << " SIGKILL, " << injected["stop"] << " SIGSTOP, "
                  << injected["restart"] << " restarts, " << injected["master"] << " master kill + resume; proxy: " << count("fault reset") << " resets, " << count("fault stall")
                  << " stalls, " << count("fault spike") << " spikes; run " << total << " s");
  MESSAGE(slurp(fault_log));
  INFO(master->log().substr(0, 6000));
  REQUIRE(master_code == 0);
  CHECK(total < k_limit_seconds);
  CHECK(injected["kill"] + injected["stop"] + injected["restart"] >= 5);  // the run really was disturbed
  CHECK(test_process::same_file(out, f.reference));
  // Exactly once across both masters: the journal holds every block either of them committed.
  CHECK(injected["master"] == 1);
  const std::string journal_check = f.path("journal.log");
  CHECK(test_process::run({k_farm, "journal", out + ".journal", "--complete"}, journal_check) == 0);
  CHECK(slurp(journal_check).find("master starts: 2") != std::string::npos);
  CHECK(slurp(journal_check).find("exactly once: yes, every pixel committed") != std::string::npos);
  // The second master took over the first one's blocks rather than rendering them again.
  CHECK(find(slurp(stats), "\"resumed_blocks\": ([1-9][0-9]*)") != "");

  // Clean-up: workers that took part exit on JobDone; one restarted too late to join never hears
  // of the job and is stopped. Then no child of this test may be left.
  int exited = 0, stopped = 0;
  for (Slot& s : slots) {
    if (s.child->wait_for_log("is done", 3)) {
      CHECK(s.child->wait(5) == 0);
      ++exited;
    } else {
      s.child->kill(SIGKILL);
      ++stopped;
    }
  }
  MESSAGE(exited << " workers exited on JobDone, " << stopped << " (not joined at the end) were stopped");
  CHECK(exited >= 1);
  for (auto* p : {&calm, &faulty}) {
    (*p)->kill(SIGTERM);
    CHECK((*p)->wait(5) >= 0);
  }
  CHECK(no_children_left());
}

TEST_SUITE_END();
