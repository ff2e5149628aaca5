// The serving side of the protocol, written once for every participant that serves peers: the
// master (its workers and relays) and a relay's site side (the site's workers). It owns the
// ROUTER socket and the peers as the protocol knows them, and leaves jobs to its owner:
// - the receive loop: at most k_serve_receive_budget messages a turn, a message of the wrong
//   number of frames or one that does not decode counted against its sender, a sender past
//   PeerQuarantine's limit cut off and its frames dropped unread from then on;
// - joining: a Hello of another protocol version refused with `incompatible`, naming the version
//   spoken here; a new peer given an id and a name; a message of a peer that never joined (or
//   was forgotten) answered with `bad_message` "not joined: send Hello";
// - heartbeats: a ping answered at once; ping_all() and the answers to it give round trips;
// - assets: each asset sent to a peer at most once (a flood of requests for a large mesh must
//   not fill memory), only those the owner's lookup knows;
// - send with identity, without blocking (a full or unroutable peer is a failed send).
// The owner (a ServingHandler) decides everything about jobs: what a Hello is answered with, what
// each message does, what a peer's leaving means. Nothing here knows of a job, so one endpoint
// can serve peers of several jobs (the service of issue 40 builds on that).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "protocol/protocol.h"
#include "serving/peer_quarantine.h"

namespace farm {

// A peer as the endpoint knows it.
struct ServedPeer {
  WorkerId id = 0;
  std::string identity;  // its ZeroMQ routing identity
  std::string name;      // as it said, or worker-ID
  int threads = 1;       // as announced (at most k_max_threads)
  int site_workers = 0;  // > 0: a relay, for a site of that many workers
  double last_heard = 0; // when a message of it was last read
  std::set<std::string> assets_sent;
  uint64_t ping_sequence = 0;  // of the last ping_all()
  double last_ping_sent = -1;
};

class ServingHandler {
 public:
  virtual ~ServingHandler() = default;
  // A Hello in this protocol version, from a new peer (`joined`: it has its id and name now) or
  // from one that said it again (`before` holds its previous threads and site workers; a relay
  // says it again when its site changes). The owner answers it (a Welcome, or not yet).
  virtual void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) = 0;
  // A message of a joined peer was read (any message but Hello, heartbeats included), at `now`.
  virtual void on_heard(ServedPeer&, double /*now*/) {}
  // Any message of a joined peer but Hello and Heartbeat.
  virtual void on_message(ServedPeer& peer, proto::Message& message) = 0;
  // The peer is cut off for its bad messages; the endpoint forgets it when this returns.
  virtual void on_quarantined(ServedPeer& peer) = 0;
  // The answer to ping_all()'s ping came back after `seconds`.
  virtual void on_round_trip(ServedPeer&, double /*seconds*/) {}
  // A message of `bytes` bytes went to a joined peer.
  virtual void on_sent(const ServedPeer&, size_t /*bytes*/) {}
  // Checked after each message: true ends this turn's reading (the master's job is done).
  virtual bool stop_reading() { return false; }
  // A client's call (farm serve's clients), from any peer, joined or not; `client_key` is the
  // Z85 public key CURVE authenticated ("" on a plaintext socket). The owner answers with a
  // ServiceReply and returns true; false (the default): it serves no calls, and the endpoint
  // says so to the caller.
  virtual bool on_call(const std::string& /*identity*/, const std::string& /*client_key*/, proto::ServiceCall&) {
    return false;
  }
};

// What an owner's asset lookup found for a hash a peer asked for.
struct AssetLookup {
  enum class Found { bytes, unknown, unreadable };
  Found found = Found::unknown;
  std::vector<uint8_t> bytes;
  std::string why;  // unreadable: the reason, for the log
};

class ServingEndpoint {
 public:
  // `speaker`: who serves, in refusals and logs ("master", "the relay"); `log_prefix` starts
  // every log line ("", "relay: ").
  ServingEndpoint(std::unique_ptr<zmq::socket_t> socket, ServingHandler& handler, std::string speaker,
                  std::string log_prefix = "");

  zmq::socket_t& socket() { return *m_socket; }
  // Reads what is waiting, at most k_serve_receive_budget messages, at `now` (seconds).
  void receive(double now);
  // Sends without blocking; false if the peer is unroutable or its queue is full.
  bool send(const std::string& identity, const proto::Message& message);
  bool send(WorkerId peer, const proto::Message& message);
  // Counts a bad message of `identity` against it (the owner's checks: a result for another job,
  // an unknown lease); it is cut off once past the limit, when its current message is handled.
  void bad_input(const std::string& identity, const std::string& what);
  // A ping to every joined peer.
  void ping_all(double now);
  // The peer is gone (silent, declared dead, or it left): no more messages to it.
  void forget(WorkerId peer);
  // Sends each asset of `hashes` the peer has not had yet; `lookup` gives its bytes. A hash the
  // lookup does not know is a bad message.
  void send_assets(ServedPeer& peer, const std::vector<std::string>& hashes,
                   const std::function<AssetLookup(const std::string&)>& lookup);

  ServedPeer* find(WorkerId peer);
  const ServedPeer* find(WorkerId peer) const;
  std::map<std::string, ServedPeer>& peers() { return m_peers; }  // by routing identity
  const std::map<std::string, ServedPeer>& peers() const { return m_peers; }
  const PeerQuarantine& quarantine() const { return m_quarantine; }
  uint64_t messages_in() const { return m_messages_in; }
  uint64_t messages_out() const { return m_messages_out; }

 private:
  void on_frame(const std::string& identity, zmq::message_t& payload, double now);
  void on_hello(const std::string& identity, const proto::Hello& hello, double now);
  // Cuts `identity` off if its bad messages just went past the limit.
  void quarantine_if_due(const std::string& identity);
  // True if `identity` is cut off; the rest of its message is then read and dropped.
  bool drop_if_quarantined(const std::string& identity, const zmq::message_t& first);

  std::unique_ptr<zmq::socket_t> m_socket;
  ServingHandler& m_handler;
  std::string m_speaker;
  std::string m_log_prefix;
  std::map<std::string, ServedPeer> m_peers;
  std::map<WorkerId, std::string> m_identity_of;
  WorkerId m_next_id = 1;
  PeerQuarantine m_quarantine;
  uint64_t m_messages_in = 0;
  uint64_t m_messages_out = 0;
};

}  // namespace farm
