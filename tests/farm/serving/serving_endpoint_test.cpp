// The serving side of the protocol (serving/serving_endpoint.h) on synthetic time, with raw
// DEALER peers over inproc: joining and refusing, the not-joined answer, heartbeats and round
// trips, assets once per peer, and the quarantine of a peer that floods bad messages.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "protocol/protocol.h"
#include "serving/serving_endpoint.h"
#include "transport/sockets.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// Records what the endpoint tells its owner.
struct Recorder : ServingHandler {
  struct Hello {
    WorkerId id;
    std::string name;
    bool joined;
    int threads, threads_before;
  };
  std::vector<Hello> hellos;
  std::vector<std::string> messages;  // message names
  std::vector<WorkerId> quarantined;
  std::vector<double> round_trips;
  std::map<WorkerId, double> heard;
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) override {
    hellos.push_back({peer.id, peer.name, joined, peer.threads, before.threads});
  }
  void on_heard(ServedPeer& peer, double now) override { heard[peer.id] = now; }
  void on_message(ServedPeer&, proto::Message& message) override { messages.push_back(proto::message_name(message)); }
  void on_quarantined(ServedPeer& peer) override { quarantined.push_back(peer.id); }
  void on_round_trip(ServedPeer&, double seconds) override { round_trips.push_back(seconds); }
};

int endpoint_count = 0;

struct Fixture {
  zmq::context_t ctx;
  Recorder handler;
  std::string address = "inproc://serving-endpoint-test-" + std::to_string(++endpoint_count);
  ServingEndpoint endpoint{open_router_socket(ctx, address, std::nullopt, 64), handler, "master"};

  zmq::socket_t peer(const std::string& identity) {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::routing_id, identity);
    s.set(zmq::sockopt::linger, 0);
    s.connect(address);
    return s;
  }
  static void say(zmq::socket_t& s, const proto::Message& m) {
    const std::vector<uint8_t> bytes = proto::encode(m);
    s.send(zmq::buffer(bytes), zmq::send_flags::none);
  }
  // Lets the endpoint read what has arrived (waiting for the first message at most a second),
  // at synthetic time `t`, until nothing more is waiting.
  void pump(double t) {
    zmq::pollitem_t item{static_cast<void*>(endpoint.socket()), 0, ZMQ_POLLIN, 0};
    for (auto wait = std::chrono::milliseconds(1000); zmq::poll(&item, 1, wait) > 0; wait = std::chrono::milliseconds(20))
      endpoint.receive(t);
  }
  // The next message a peer got (fails the test if none comes within a second).
  static proto::Message heard_by(zmq::socket_t& s) {
    zmq::pollitem_t item{static_cast<void*>(s), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(1000));
    zmq::message_t m;
    REQUIRE(s.recv(m, zmq::recv_flags::dontwait));
    proto::Decoded d = proto::decode(static_cast<const uint8_t*>(m.data()), m.size());
    REQUIRE_MESSAGE(d.message, d.error);
    return *d.message;
  }
  static bool nothing_for(zmq::socket_t& s) {
    zmq::pollitem_t item{static_cast<void*>(s), 0, ZMQ_POLLIN, 0};
    return zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0;
  }
};

proto::Hello hello(const std::string& name, uint32_t threads = 2) {
  proto::Hello h;
  h.worker_name = name;
  h.threads = threads;
  return h;
}

}  // namespace

TEST_CASE("serving endpoint: a Hello of another protocol is refused naming both versions, one of this protocol joins") {
  Fixture f;
  zmq::socket_t old = f.peer("old");
  proto::Hello h = hello("old");
  h.protocol_version = proto::k_protocol_version + 7;
  Fixture::say(old, h);
  f.pump(1.0);
  const proto::Message refusal = Fixture::heard_by(old);
  const auto* e = std::get_if<proto::Error>(&refusal);
  REQUIRE(e);
  CHECK(e->code == proto::ErrorCode::incompatible);
  CHECK(e->message == "protocol version " + std::to_string(proto::k_protocol_version + 7) +
                          " is not supported; master speaks " + std::to_string(proto::k_protocol_version));
  CHECK(f.handler.hellos.empty());
  CHECK(f.endpoint.peers().empty());

  zmq::socket_t a = f.peer("a");
  zmq::socket_t b = f.peer("b");
  Fixture::say(a, hello("alpha", 4));
  Fixture::say(b, hello(""));
  f.pump(2.0);
  REQUIRE(f.handler.hellos.size() == 2);
  std::map<std::string, WorkerId> ids;
  for (const auto& j : f.handler.hellos) {
    CHECK(j.joined);
    ids[j.name] = j.id;
  }
  REQUIRE(ids.size() == 2);
  REQUIRE(ids.count("alpha"));
  // A peer that gave no name is named by its id.
  const WorkerId other = ids["alpha"] == 1 ? 2 : 1;
  CHECK(ids.count("worker-" + std::to_string(other)));
  REQUIRE(f.endpoint.find(ids["alpha"]));
  CHECK(f.endpoint.find(ids["alpha"])->threads == 4);
  CHECK(f.endpoint.find(ids["alpha"])->last_heard == 2.0);

  // Said again with other counts: not a new peer, and its owner sees what changed.
  Fixture::say(a, hello("alpha", 8));
  f.pump(3.0);
  REQUIRE(f.handler.hellos.size() == 3);
  CHECK_FALSE(f.handler.hellos.back().joined);
  CHECK(f.handler.hellos.back().id == ids["alpha"]);
  CHECK(f.handler.hellos.back().threads == 8);
  CHECK(f.handler.hellos.back().threads_before == 4);
  CHECK(f.endpoint.peers().size() == 2);
}

TEST_CASE("serving endpoint: a peer that never joined, or was forgotten, is told to send Hello, and its message goes nowhere") {
  Fixture f;
  zmq::socket_t s = f.peer("s");
  Fixture::say(s, proto::WorkRequest{4, 0});
  f.pump(1.0);
  proto::Message answer = Fixture::heard_by(s);
  const auto* e = std::get_if<proto::Error>(&answer);
  REQUIRE(e);
  CHECK(e->code == proto::ErrorCode::bad_message);
  CHECK(e->message == "not joined: send Hello");
  CHECK(f.handler.messages.empty());

  Fixture::say(s, hello("s"));
  f.pump(2.0);
  Fixture::say(s, proto::WorkRequest{4, 0});
  f.pump(2.5);
  REQUIRE(f.handler.messages.size() == 1);
  CHECK(f.handler.messages.front() == "WorkRequest");
  const WorkerId id = f.handler.hellos.front().id;
  CHECK(f.handler.heard[id] == 2.5);

  f.endpoint.forget(id);
  CHECK_FALSE(f.endpoint.find(id));
  Fixture::say(s, proto::WorkRequest{4, 0});
  f.pump(3.0);
  answer = Fixture::heard_by(s);
  REQUIRE(std::get_if<proto::Error>(&answer));
  CHECK(f.handler.messages.size() == 1);
}

TEST_CASE("serving endpoint: pings are answered at once, and the answers to ping_all give round trips in synthetic time") {
  Fixture f;
  zmq::socket_t s = f.peer("s");
  Fixture::say(s, hello("s"));
  f.pump(0.0);
  Fixture::say(s, proto::Heartbeat{41, true});
  f.pump(1.0);
  proto::Message pong = Fixture::heard_by(s);
  const auto* h = std::get_if<proto::Heartbeat>(&pong);
  REQUIRE(h);
  CHECK(h->sequence == 41);
  CHECK_FALSE(h->ping);
  CHECK(f.handler.messages.empty());  // heartbeats are the endpoint's own

  f.endpoint.ping_all(5.0);
  proto::Message ping = Fixture::heard_by(s);
  h = std::get_if<proto::Heartbeat>(&ping);
  REQUIRE(h);
  CHECK(h->ping);
  // A stale answer (an earlier sequence) gives no round trip; the right one does.
  Fixture::say(s, proto::Heartbeat{h->sequence - 1, false});
  Fixture::say(s, proto::Heartbeat{h->sequence, false});
  f.pump(5.25);
  REQUIRE(f.handler.round_trips.size() == 1);
  CHECK(f.handler.round_trips.front() == doctest::Approx(0.25));
}

TEST_CASE("serving endpoint: each asset goes to a peer once, an unknown one counts against it, an unreadable one is not sent") {
  Fixture f;
  zmq::socket_t s = f.peer("s");
  Fixture::say(s, hello("s"));
  f.pump(0.0);
  ServedPeer* peer = f.endpoint.find(f.handler.hellos.front().id);
  REQUIRE(peer);
  int reads = 0;
  auto lookup = [&](const std::string& hash) {
    AssetLookup found;
    if (hash == "known") {
      ++reads;
      found.found = AssetLookup::Found::bytes;
      found.bytes = {1, 2, 3};
    } else if (hash == "lost") {
      found.found = AssetLookup::Found::unreadable;
      found.why = "gone";
    }
    return found;
  };
  f.endpoint.send_assets(*peer, {"known", "known", "lost", "nobody-knows"}, lookup);
  f.endpoint.send_assets(*peer, {"known"}, lookup);
  proto::Message got = Fixture::heard_by(s);
  const auto* data = std::get_if<proto::AssetData>(&got);
  REQUIRE(data);
  CHECK(data->hash == "known");
  CHECK(data->data == std::vector<uint8_t>{1, 2, 3});
  CHECK(Fixture::nothing_for(s));
  CHECK(reads == 1);
  CHECK(f.endpoint.quarantine().bad_messages() == 1);
  CHECK(peer->assets_sent == std::set<std::string>{"known"});
}

TEST_CASE("serving endpoint: a peer past the bad-message limit is quarantined once, forgotten, and its frames dropped unread") {
  Fixture f;
  zmq::socket_t good = f.peer("good");
  zmq::socket_t bad = f.peer("bad");
  Fixture::say(good, hello("good"));
  Fixture::say(bad, hello("bad"));
  f.pump(0.0);
  REQUIRE(f.endpoint.peers().size() == 2);
  const std::vector<uint8_t> garbage = {0xde, 0xad, 0xbe, 0xef};
  for (uint64_t i = 0; i < PeerQuarantine::k_limit + 20; ++i) {
    if (i % 2) {
      bad.send(zmq::buffer(garbage), zmq::send_flags::none);
    } else {  // two frames where the protocol has one
      bad.send(zmq::buffer(garbage), zmq::send_flags::sndmore);
      bad.send(zmq::buffer(garbage), zmq::send_flags::none);
    }
  }
  Fixture::say(good, proto::WorkRequest{1, 0});
  f.pump(1.0);
  REQUIRE(f.handler.quarantined.size() == 1);
  const WorkerId bad_id = f.handler.quarantined.front();
  CHECK(f.endpoint.find(bad_id) == nullptr);
  CHECK(f.endpoint.peers().size() == 1);
  CHECK(f.endpoint.peers().begin()->second.name == "good");
  CHECK(f.endpoint.quarantine().bad_messages() == PeerQuarantine::k_limit + 1);
  CHECK(f.endpoint.quarantine().dropped_frames() > 0);
  CHECK(f.endpoint.quarantine().json().find("\"worker\": " + std::to_string(bad_id)) != std::string::npos);
  // The honest peer was served all along.
  CHECK(f.handler.messages == std::vector<std::string>{"WorkRequest"});
}
