// A worker that cannot take a job tells the master why, and a job no connected worker can take
// ends (issue 38). Before, a worker dropped a Welcome past its protocol's bounds (a .blend's
// 100000 samples) as any bad message, and `farm render` waited at 0% forever. Each side is
// driven here by a raw socket standing in for the other, over loopback on an ephemeral port.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <zmq.hpp>

#include "farm/farm_fixture.h"
#include "protocol/protocol.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
namespace proto = farm::proto;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::optional<proto::Message> decoded(const zmq::message_t& m) {
  proto::Decoded d = proto::decode(static_cast<const uint8_t*>(m.data()), m.size());
  return d.message;
}

}  // namespace

namespace {

// A master that did not check its scene (or of another build) sends 100000 samples per pixel to
// `peer` (a worker or a relay): its answer, within 20 s.
std::optional<proto::Error> answer_to_bad_welcome(Child& peer, zmq::socket_t& master) {
  master.set(zmq::sockopt::rcvtimeo, 200);
  bool welcomed = false;
  for (auto t0 = Clock::now(); seconds_since(t0) < 20 && peer.poll() == -1;) {
    zmq::message_t from, body;
    if (!master.recv(from)) continue;
    REQUIRE(master.recv(body));
    std::optional<proto::Message> m = decoded(body);
    REQUIRE(m);
    if (std::holds_alternative<proto::Hello>(*m) && !welcomed) {
      proto::Welcome w;
      w.job_id = 77;
      w.scene_name = "scene.toml";
      w.settings.width = 32;
      w.settings.height = 24;
      w.settings.spp = 100000;
      w.settings.max_depth = 4;
      const std::vector<uint8_t> bytes = proto::encode(w);
      master.send(from, zmq::send_flags::sndmore);
      master.send(zmq::buffer(bytes));
      welcomed = true;
    } else if (const auto* e = std::get_if<proto::Error>(&*m)) {
      return *e;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("worker and relay: a Welcome past their protocol's bounds is answered with the reason, not dropped") {
  const fs::path dir = test_paths::temp_dir("welcome_refused");
  zmq::context_t ctx;
  zmq::socket_t master(ctx, zmq::socket_type::router);
  master.set(zmq::sockopt::linger, 0);
  master.bind("tcp://127.0.0.1:*");
  const std::string endpoint = master.get(zmq::sockopt::last_endpoint);
  const std::string why = "malformed Welcome: spp 100000 out of range (1 to 65536)";
  SUBCASE("a worker") {
    Child worker({k_farm, "worker", "--connect", endpoint, "--threads", "1", "--name", "w", "--cache",
                  (dir / "cache").string(), "--give-up-after", "20"},
                 (dir / "w.log").string());
    std::optional<proto::Error> answer = answer_to_bad_welcome(worker, master);
    REQUIRE_MESSAGE(answer, worker.log());
    CHECK(answer->code == proto::ErrorCode::bad_message);
    CHECK(answer->message == "this worker cannot take the job as sent: " + why);
    CHECK_MESSAGE(worker.log().find("error: cannot take the master's job: " + why) != std::string::npos, worker.log());
    CHECK(worker.poll() == -1);  // connected and idle, for a job it can take
    worker.kill(SIGTERM);
    CHECK(worker.wait(30) == 0);
  }
  SUBCASE("a relay") {
    Child relay({k_farm, "relay", "--connect", endpoint, "--bind", "tcp://127.0.0.1:*", "--name", "r", "--threads", "1",
                 "--cache", (dir / "cache").string(), "--give-up-after", "20"},
                (dir / "r.log").string());
    std::optional<proto::Error> answer = answer_to_bad_welcome(relay, master);
    REQUIRE_MESSAGE(answer, relay.log());
    CHECK(answer->code == proto::ErrorCode::bad_message);
    CHECK(answer->message == "relay 'r' cannot take the job as sent: " + why);
    CHECK_MESSAGE(relay.log().find("error: relay: cannot take the master's job: " + why) != std::string::npos, relay.log());
    CHECK(relay.poll() == -1);
    relay.kill(SIGTERM);
    relay.wait(30);
  }
  fs::remove_all(dir);
}

TEST_CASE("master: a job every connected worker refuses as sent ends with exit 1 and the reason") {
  Fixture f("job_refused");
  const std::string out = f.path("out.png");
  auto master = start_master(f, out, {"--no-journal"});
  zmq::context_t ctx;
  zmq::socket_t worker(ctx, zmq::socket_type::dealer);
  worker.set(zmq::sockopt::linger, 0);
  worker.set(zmq::sockopt::rcvtimeo, 100);
  worker.connect(endpoint_from(*master));
  proto::Hello hello;
  hello.worker_name = "picky";
  hello.threads = 1;
  auto send = [&](const proto::Message& m) {
    const std::vector<uint8_t> bytes = proto::encode(m);
    worker.send(zmq::buffer(bytes));
  };
  send(hello);
  // Stands in for a worker of another build: it answers heartbeats (so it stays connected) and
  // refuses the job as sent.
  const std::string why = "this worker cannot take the job as sent: malformed Welcome: spp 2 out of range (1 to 1)";
  for (auto t0 = Clock::now(); seconds_since(t0) < 30 && master->poll() == -1;) {
    zmq::message_t body;
    if (!worker.recv(body)) continue;
    std::optional<proto::Message> m = decoded(body);
    if (!m) continue;
    if (std::holds_alternative<proto::Welcome>(*m)) send(proto::Error{proto::ErrorCode::bad_message, why});
    if (const auto* h = std::get_if<proto::Heartbeat>(&*m); h && h->ping) send(proto::Heartbeat{h->sequence, false});
  }
  // Before: the master waited for a worker that could take it, at 0%, for ever.
  REQUIRE_MESSAGE(master->wait(5) == 1, master->log());
  CHECK_MESSAGE(master->log().find("worker 1 'picky' sits this job out: " + why) != std::string::npos, master->log());
  CHECK_MESSAGE(master->log().find("error: no worker left to render the job: every connected worker sits it out, the "
                                   "last refusing it being worker 1 'picky': " + why + ": no image written") !=
                    std::string::npos,
                master->log());
  CHECK_FALSE(fs::exists(out));
}

TEST_SUITE_END();
