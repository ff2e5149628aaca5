#include "serving/serving_endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/json_text.h"
#include "base/limits.h"
#include "transport/flow.h"

namespace farm {

ServingEndpoint::ServingEndpoint(std::unique_ptr<zmq::socket_t> socket, ServingHandler& handler, std::string speaker,
                                 std::string log_prefix)
    : m_socket(std::move(socket)), m_handler(handler), m_speaker(std::move(speaker)), m_log_prefix(std::move(log_prefix)) {}

bool ServingEndpoint::send(const std::string& identity, const proto::Message& message) {
  std::vector<uint8_t> bytes = proto::encode(message);
  try {
    // ROUTER_MANDATORY makes an unroutable peer an error instead of a silent drop; a full
    // queue (slow consumer past its high-water mark) is also reported rather than blocking.
    if (!m_socket->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    if (!m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return false;
  } catch (const zmq::error_t& e) {
    spdlog::debug("{}cannot send {} to a peer: {}", m_log_prefix, proto::message_name(message), e.what());
    return false;
  }
  ++m_messages_out;
  auto it = m_peers.find(identity);
  if (it != m_peers.end()) m_handler.on_sent(it->second, bytes.size());
  return true;
}

bool ServingEndpoint::send(WorkerId peer, const proto::Message& message) {
  auto it = m_identity_of.find(peer);
  return it != m_identity_of.end() && send(it->second, message);
}

ServedPeer* ServingEndpoint::find(WorkerId peer) {
  auto it = m_identity_of.find(peer);
  if (it == m_identity_of.end()) return nullptr;
  auto p = m_peers.find(it->second);
  return p == m_peers.end() ? nullptr : &p->second;
}

const ServedPeer* ServingEndpoint::find(WorkerId peer) const {
  return const_cast<ServingEndpoint*>(this)->find(peer);
}

void ServingEndpoint::bad_input(const std::string& identity, const std::string& what) {
  const uint64_t n = m_quarantine.count(identity);
  // The first few in full, then only now and then: a flood must not flood the log.
  if (n <= 10 || n % 1000 == 0) {
    auto peer = m_peers.find(identity);
    spdlog::warn("{}ignored a bad message ({} so far) from peer {}: {}", m_log_prefix, n,
                 peer != m_peers.end() ? std::to_string(peer->second.id) : "(unknown)", what);
  }
}

void ServingEndpoint::forget(WorkerId peer) {
  auto it = m_identity_of.find(peer);
  if (it == m_identity_of.end()) return;
  m_peers.erase(it->second);
  m_identity_of.erase(it);
}

void ServingEndpoint::quarantine_if_due(const std::string& identity) {
  std::optional<uint64_t> bad = m_quarantine.due(identity);
  if (!bad) return;
  WorkerId id = 0;
  if (auto peer = m_peers.find(identity); peer != m_peers.end()) {
    id = peer->second.id;
    m_quarantine.set_worker(identity, id);
    m_handler.on_quarantined(peer->second);
    forget(id);
  }
  spdlog::warn("{}peer {} sent {} bad messages: quarantined, its messages are dropped unread from now on{}", m_log_prefix,
               id ? "worker " + std::to_string(id) : std::string("(unknown)"), *bad,
               id ? " and its blocks go back to the pool" : "");
}

bool ServingEndpoint::drop_if_quarantined(const std::string& identity, const zmq::message_t& first) {
  if (!m_quarantine.contains(identity)) return false;
  bool more = first.more();
  while (more) {
    zmq::message_t frame;
    if (!m_socket->recv(frame, zmq::recv_flags::dontwait)) break;
    m_quarantine.dropped_frame(identity);
    more = frame.more();
  }
  return true;
}

void ServingEndpoint::receive(double now) {
  for (int budget = 0; budget < k_serve_receive_budget; ++budget) {
    zmq::message_t identity, payload;
    if (!m_socket->recv(identity, zmq::recv_flags::dontwait)) break;
    std::string id(static_cast<const char*>(identity.data()), identity.size());
    if (drop_if_quarantined(id, identity)) continue;
    const bool complete = identity.more() && m_socket->recv(payload, zmq::recv_flags::dontwait).has_value();
    // Extra frames are not part of the protocol: drain and reject.
    bool extra = false;
    while (payload.more()) {
      zmq::message_t rest;
      if (!m_socket->recv(rest, zmq::recv_flags::dontwait)) break;
      extra = true;
      if (!rest.more()) break;
    }
    if (!complete || extra) {
      bad_input(id, "wrong number of frames");
      quarantine_if_due(id);
      continue;
    }
    ++m_messages_in;
    on_frame(id, payload, now);
    quarantine_if_due(id);  // if this message took it past the limit
    if (m_handler.stop_reading()) break;
  }
}

// The key CURVE authenticated for the connection `payload` came on ("" on a plaintext socket,
// where libzmq sets no User-Id).
static std::string client_key_of(zmq::message_t& payload) {
  try {
    const char* key = payload.gets("User-Id");
    return key ? std::string(key) : std::string();
  } catch (const zmq::error_t&) {
    return "";
  }
}

void ServingEndpoint::on_frame(const std::string& identity, zmq::message_t& payload, double now) {
  proto::Decoded d = proto::decode(static_cast<const uint8_t*>(payload.data()), payload.size());
  if (!d.message) return bad_input(identity, d.error);
  if (const auto* hello = std::get_if<proto::Hello>(&*d.message)) return on_hello(identity, *hello, now);
  if (auto* call = std::get_if<proto::ServiceCall>(&*d.message)) {
    if (call->protocol_version != proto::k_protocol_version) {
      send(identity, proto::ServiceReply{call->call, false,
                                         "{" + json_field("error", "protocol version " + std::to_string(call->protocol_version) +
                                                                          " is not supported; " + m_speaker + " speaks " +
                                                                          std::to_string(proto::k_protocol_version)) + "}",
                                         {}});
      return;
    }
    if (!m_handler.on_call(identity, client_key_of(payload), *call)) {
      send(identity, proto::ServiceReply{call->call, false,
                                         "{" + json_field("error", "this endpoint is not a farm service (farm serve) but " + m_speaker +
                                                                          ", which takes no calls from clients") + "}",
                                         {}});
    }
    return;
  }
  auto it = m_peers.find(identity);
  if (it == m_peers.end()) {
    // Declared dead, or never said hello: it must (re)join first.
    send(identity, proto::Error{proto::ErrorCode::bad_message, "not joined: send Hello"});
    return;
  }
  ServedPeer& peer = it->second;
  peer.last_heard = now;
  m_handler.on_heard(peer, now);
  if (const auto* heartbeat = std::get_if<proto::Heartbeat>(&*d.message)) {
    if (heartbeat->ping) {
      send(identity, proto::Heartbeat{heartbeat->sequence, false});
    } else if (heartbeat->sequence == peer.ping_sequence && peer.last_ping_sent >= 0) {
      m_handler.on_round_trip(peer, now - peer.last_ping_sent);
    }
    return;
  }
  m_handler.on_message(peer, *d.message);
}

void ServingEndpoint::on_hello(const std::string& identity, const proto::Hello& hello, double now) {
  if (hello.protocol_version != proto::k_protocol_version) {
    spdlog::warn("{}refused worker '{}': protocol {} (this {} speaks {})", m_log_prefix, hello.worker_name,
                 hello.protocol_version, m_speaker, proto::k_protocol_version);
    send(identity, proto::Error{proto::ErrorCode::incompatible,
                                "protocol version " + std::to_string(hello.protocol_version) + " is not supported; " +
                                    m_speaker + " speaks " + std::to_string(proto::k_protocol_version)});
    return;
  }
  const int threads = static_cast<int>(std::min<uint32_t>(hello.threads, k_max_threads));
  const int site_workers = static_cast<int>(std::min<uint32_t>(hello.site_workers, k_max_threads));
  auto it = m_peers.find(identity);
  const bool joined = it == m_peers.end();
  if (joined) {
    ServedPeer p;
    p.id = m_next_id++;
    p.identity = identity;
    p.name = hello.worker_name.empty() ? "worker-" + std::to_string(p.id) : hello.worker_name;
    it = m_peers.emplace(identity, std::move(p)).first;
    m_identity_of[it->second.id] = identity;
  }
  ServedPeer& peer = it->second;
  const ServedPeer before = peer;
  peer.threads = threads;
  peer.site_workers = site_workers;
  peer.last_heard = now;
  m_handler.on_hello(peer, joined, before);
}

void ServingEndpoint::ping_all(double now) {
  for (auto& [identity, peer] : m_peers) {
    peer.ping_sequence++;
    peer.last_ping_sent = now;
    send(identity, proto::Heartbeat{peer.ping_sequence, true});
  }
}

void ServingEndpoint::send_assets(ServedPeer& peer, const std::vector<std::string>& hashes,
                                  const std::function<AssetLookup(const std::string&)>& lookup) {
  for (const std::string& hash : hashes) {
    if (peer.assets_sent.count(hash)) continue;
    AssetLookup found = lookup(hash);
    switch (found.found) {
      case AssetLookup::Found::unknown:
        bad_input(peer.identity, "request for an unknown asset");
        continue;
      case AssetLookup::Found::unreadable:
        spdlog::error("{}cannot read asset {} any more: {}", m_log_prefix, hash, found.why);
        continue;
      case AssetLookup::Found::bytes:
        break;
    }
    peer.assets_sent.insert(hash);
    send(peer.identity, proto::AssetData{hash, std::move(found.bytes)});
  }
}

}  // namespace farm
