// What the two chaos tests share (chaos_flood_test.cpp: malformed messages; chaos_faults_test.cpp:
// killed workers and faulty links): reading numbers from the environment and text from logs, and
// starting a master on a loopback port.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "farm_fixture.h"
#include "process.h"

namespace chaos_support {

using test_process::Child;
using Clock = std::chrono::steady_clock;
using farm_fixture::Fixture;
using farm_fixture::k_farm;
using farm_fixture::start_worker;  // one thread, --once, the fixture's cache, gives up after 20 s

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A number from the environment (longer runs: FARM_FLOOD_MESSAGES, FARM_CHAOS_SEED), else `fallback`.
inline long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n > 0 ? n : fallback;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::string find(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::string(m[1]) : std::string();
}

// A master on `bind` (an ephemeral port by default). A restarted master (resume) must bind the
// port of the first one so that workers and proxies find it again: pass tcp://127.0.0.1:PORT.
inline std::unique_ptr<Child> start_master(const Fixture& f, const std::string& out, const std::string& log,
                                           std::vector<std::string> extra, const std::string& bind = "tcp://127.0.0.1:*") {
  std::vector<std::string> args = {k_farm, "master", f.scene, "-o", out, "--bind", bind};
  args.insert(args.end(), extra.begin(), extra.end());
  auto master = std::make_unique<Child>(args, log);
  REQUIRE(master->wait_for_log("listening on", 20));
  return master;
}

inline std::string endpoint_from(const Child& master) {
  return find(master.log(), "listening on (tcp://127\\.0\\.0\\.1:[0-9]+)");
}

}  // namespace chaos_support
