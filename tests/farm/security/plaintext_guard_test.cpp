// The master and the worker refuse plaintext off loopback themselves, whoever drives them: the
// CLI decides keys first (cli/socket_keys.h), and these guards catch any other caller that did
// not (docs/architecture.md, Errors). Nothing is bound or connected before the refusal.
#include <doctest/doctest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include "master/master.h"
#include "relay/relay.h"
#include "worker/worker.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// What the farm logs while `run` runs, through a logger of our own (the default one restored).
template <class Run>
std::string logged(Run run) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  auto saved = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("guard_test", sink));
  run();
  spdlog::set_default_logger(saved);
  std::string all;
  for (const std::string& line : sink->last_formatted()) all += line;
  return all;
}

}  // namespace

TEST_CASE("plaintext guard: a master on a network endpoint without keys refuses before binding") {
  MasterOptions m;
  m.render.scene_path = "never-read.toml";  // refused before the scene is looked at
  m.render.output_path = "never-written.png";
  m.bind = "tcp://0.0.0.0:0";
  RunStatus status = RunStatus::ok;
  std::string log = logged([&] { status = run_master(m); });
  CHECK(status == RunStatus::bad_input);
  CHECK_MESSAGE(log.find("refusing to serve tcp://0.0.0.0:0 without keys") != std::string::npos, log);
  CHECK(log.find("never-read.toml") == std::string::npos);
  m.insecure = true;  // on purpose: then it gets as far as the scene, which is missing
  log = logged([&] { status = run_master(m); });
  CHECK(status == RunStatus::bad_input);
  CHECK(log.find("refusing") == std::string::npos);
  CHECK_MESSAGE(log.find("never-read.toml") != std::string::npos, log);
  m.insecure = false;
  m.bind = "tcp://127.0.0.1:0";  // loopback needs no keys: again as far as the scene
  log = logged([&] { status = run_master(m); });
  CHECK(log.find("refusing") == std::string::npos);
  CHECK_MESSAGE(log.find("never-read.toml") != std::string::npos, log);
}

TEST_CASE("plaintext guard: a worker to a network endpoint without keys refuses before connecting") {
  WorkerOptions w;
  w.connect = "tcp://192.0.2.1:5555";  // TEST-NET-1: nothing answers there
  w.once = true;
  RunStatus status = RunStatus::ok;
  const std::string log = logged([&] { status = run_worker(w); });
  CHECK(status == RunStatus::bad_input);
  CHECK_MESSAGE(log.find("refusing to connect to tcp://192.0.2.1:5555 without keys") != std::string::npos, log);
}

TEST_CASE("plaintext guard: a relay without keys refuses a network endpoint on either side") {
  RelayOptions r;
  r.connect = "tcp://192.0.2.1:5555";  // TEST-NET-1
  r.bind = "tcp://127.0.0.1:0";
  r.once = true;
  RunStatus status = RunStatus::ok;
  std::string log = logged([&] { status = run_relay(r); });
  CHECK(status == RunStatus::bad_input);
  CHECK_MESSAGE(log.find("refusing to connect to tcp://192.0.2.1:5555 without keys") != std::string::npos, log);
  r.connect = "tcp://127.0.0.1:1";
  r.bind = "tcp://0.0.0.0:0";
  log = logged([&] { status = run_relay(r); });
  CHECK(status == RunStatus::bad_input);
  CHECK_MESSAGE(log.find("refusing to serve tcp://0.0.0.0:0 without keys") != std::string::npos, log);
}

TEST_SUITE_END();
