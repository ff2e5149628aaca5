// `farm relay --give-up-after N` (relay/relay.cpp, docs/relays.md, Failures): a relay joins its
// master once its site workers are there; until then it is without a master too, so N seconds
// with no site worker, or fewer than it waits for, end it (exit 1) as a silent master does.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

const std::string k_no_master = "tcp://127.0.0.1:1";  // nothing listens on port 1

std::unique_ptr<Child> start_relay(const fs::path& dir, std::vector<std::string> extra) {
  std::vector<std::string> args = {k_farm,  "relay",   "--connect", k_no_master, "--bind", "tcp://127.0.0.1:*",
                                   "--name", "site", "--cache",   (dir / "relay_cache").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  auto relay = std::make_unique<Child>(args, (dir / "relay.log").string());
  REQUIRE(relay->wait_for_log("relay listening on", 20));
  return relay;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("relay: --give-up-after ends a relay no site worker reaches (exit 1, saying so)") {
  const fs::path dir = test_paths::temp_dir("relay_give_up_alone");
  const auto started = std::chrono::steady_clock::now();
  auto relay = start_relay(dir, {"--give-up-after", "2"});
  const std::string site = endpoint_from(*relay);
  REQUIRE_FALSE(site.empty());
  const int code = relay->wait(20);
  const double took = seconds_since(started);
  MESSAGE("relay exited " << code << " after " << took << " s");
  CHECK(code == 1);
  CHECK(took >= 2.0);
  CHECK(took < 12.0);  // a start-up on a loaded machine, then 2 s
  CHECK_MESSAGE(relay->log().find("error: no site worker reached this relay at " + site +
                                  " in 2 s, so it never joined its master at " + k_no_master + "; giving up") !=
                    std::string::npos,
                relay->log());
  fs::remove_all(dir);
}

TEST_CASE("relay: --give-up-after counts one site worker of the two it waits for as not enough") {
  const fs::path dir = test_paths::temp_dir("relay_give_up_short");
  auto relay = start_relay(dir, {"--workers", "2", "--give-up-after", "3"});
  const std::string site = endpoint_from(*relay);
  REQUIRE_FALSE(site.empty());
  Child worker({k_farm, "worker", "--connect", site, "--threads", "1", "--name", "w1", "--cache", (dir / "w1_cache").string(),
                "--give-up-after", "30"},
               (dir / "w1.log").string());
  CHECK(relay->wait(20) == 1);
  CHECK_MESSAGE(relay->log().find("error: 1 of the 2 site workers it waits for reached this relay at " + site) !=
                    std::string::npos,
                relay->log());
  worker.kill(SIGKILL);
  fs::remove_all(dir);
}

TEST_CASE("relay: --give-up-after ends a relay that joined at start (--threads) and finds no master") {
  const fs::path dir = test_paths::temp_dir("relay_give_up_joined");
  auto relay = start_relay(dir, {"--threads", "1", "--give-up-after", "2"});
  CHECK(relay->wait(20) == 1);
  CHECK_MESSAGE(relay->log().find("error: no master at " + k_no_master) != std::string::npos, relay->log());
  fs::remove_all(dir);
}

TEST_CASE("relay: without --give-up-after a relay waits for its site workers as long as it takes") {
  const fs::path dir = test_paths::temp_dir("relay_no_give_up");
  auto relay = start_relay(dir, {});
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK(relay->poll() == -1);
  relay->kill(SIGKILL);
  fs::remove_all(dir);
}

TEST_SUITE_END();
