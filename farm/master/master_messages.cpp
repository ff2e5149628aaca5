// What the master does with each message from a worker (and the heartbeat round that keeps
// its view of them fresh). The loop that calls these is in master.cpp.
#include "master/master_state.h"

#include "backend/scene_kind.h"

namespace farm::master_detail {

bool Master::send(const std::string& identity, const proto::Message& m) {
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    // ROUTER_MANDATORY makes an unroutable peer an error instead of a silent drop; a full
    // queue (slow consumer past its high-water mark) is also reported rather than blocking.
    if (!m_socket->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    if (!m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return false;
  } catch (const zmq::error_t& e) {
    spdlog::debug("cannot send {} to a peer: {}", proto::message_name(m), e.what());
    return false;
  }
  ++m_messages_out;
  auto it = m_peers.find(identity);
  if (it != m_peers.end()) m_job->bytes_out(it->second.id, bytes.size());
  return true;
}

void Master::bad_input(const std::string& identity, const std::string& what) {
  const uint64_t n = m_quarantine.count(identity);
  // Log the first few in full, then only occasionally: a flood must not flood the log.
  if (n <= 10 || n % 1000 == 0) {
    auto peer = m_peers.find(identity);
    spdlog::warn("ignored a bad message ({} so far) from peer {}: {}", n,
                 peer != m_peers.end() ? std::to_string(peer->second.id) : "(unknown)", what);
  }
}

// The master's side of a worker that is gone: no more messages to it.
void Master::forget(WorkerId worker) {
  auto it = m_identity_of.find(worker);
  if (it == m_identity_of.end()) return;
  auto peer = m_peers.find(it->second);
  if (peer != m_peers.end() && m_o.on_worker_change) m_o.on_worker_change(peer->second.name, false);
  m_sitting_out.erase(worker);
  m_peers.erase(it->second);
  m_identity_of.erase(it);
  // Recalls from or for it are moot: its leases went back to the pool with it.
  m_recalls.relay_gone(worker);
}

// Called between messages (never inside a handler that still holds a Peer&): the peer leaves
// the scheduler as a dead worker would, its leases go back to the pool, and from now on its
// frames are dropped before decoding.
void Master::quarantine(const std::string& identity) {
  std::optional<uint64_t> bad = m_quarantine.due(identity);
  if (!bad) return;
  WorkerId worker = 0;
  auto peer = m_peers.find(identity);
  if (peer != m_peers.end()) {
    worker = peer->second.id;
    m_quarantine.set_worker(identity, worker);
    m_job->leave(worker, now(), true);
    forget(worker);
  }
  spdlog::warn("peer {} sent {} bad messages: quarantined, its messages are dropped unread from now on{}",
               worker ? "worker " + std::to_string(worker) : std::string("(unknown)"), *bad,
               worker ? " and its blocks go back to the pool" : "");
}

// True if `identity` is quarantined; its remaining frames are then read and discarded.
bool Master::drop_if_quarantined(const std::string& identity, const zmq::message_t& first) {
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

void Master::on_hello(const std::string& identity, const proto::Hello& h) {
  if (h.protocol_version != proto::k_protocol_version) {
    spdlog::warn("refused worker '{}': protocol {} (this master speaks {})", h.worker_name, h.protocol_version,
                 proto::k_protocol_version);
    send(identity, proto::Error{proto::ErrorCode::incompatible,
                                "protocol version " + std::to_string(h.protocol_version) + " is not supported; master speaks " +
                                    std::to_string(proto::k_protocol_version)});
    return;
  }
  auto it = m_peers.find(identity);
  if (it == m_peers.end()) {
    Peer p;
    p.id = m_next_worker++;
    p.name = h.worker_name.empty() ? "worker-" + std::to_string(p.id) : h.worker_name;
    it = m_peers.emplace(identity, p).first;
    m_identity_of[p.id] = identity;
    // Its render slots: a POV-Ray worker runs several povray processes per thread (they mostly
    // wait), and the policies must queue work for all of them.
    const int per_thread = renders_per_thread(scene_kind(m_o.render.scene_path));
    m_job->join(p.id, p.name, static_cast<int>(h.threads) * per_thread, now(), static_cast<int>(h.site_workers));
    if (h.site_workers > 0) {
      spdlog::info("relay {} '{}' joined for a site of {} worker(s), {} thread(s)", p.id, p.name, h.site_workers,
                   h.threads);
    } else if (per_thread > 1) {
      spdlog::info("worker {} '{}' joined with {} thread(s), {} blocks at once", p.id, p.name, h.threads,
                   h.threads * per_thread);
    } else {
      spdlog::info("worker {} '{}' joined with {} thread(s)", p.id, p.name, h.threads);
    }
    it->second.threads = static_cast<int>(h.threads);
    it->second.site_workers = static_cast<int>(h.site_workers);
    if (h.site_workers > 0) m_recalls.relay_joined(p.id);
    if (m_o.on_worker_change) m_o.on_worker_change(p.name, true);
  } else if (static_cast<int>(h.threads) != it->second.threads ||
             static_cast<int>(h.site_workers) != it->second.site_workers) {
    // A relay whose site grew or shrank: the policy sizes its leases by the new counts.
    Peer& p = it->second;
    p.threads = static_cast<int>(h.threads);
    p.site_workers = static_cast<int>(h.site_workers);
    if (p.site_workers > 0) m_recalls.relay_joined(p.id);
    const int per_thread = renders_per_thread(scene_kind(m_o.render.scene_path));
    m_job->resize(p.id, p.threads * per_thread, p.site_workers, now());
    spdlog::info("{} {} '{}' now has {} thread(s){}", p.site_workers > 0 ? "relay" : "worker", p.id, p.name, p.threads,
                 p.site_workers > 0 ? fmt::format(" and {} site worker(s)", p.site_workers) : std::string());
  }
  proto::Welcome w;
  w.job_id = m_job_id;
  w.scene_name = m_manifest.front().ref.name;
  for (const ManifestEntry& e : m_manifest) w.assets.push_back(e.ref);
  w.settings = m_settings;
  w.heartbeat_ms = static_cast<uint32_t>(std::lround(m_o.scheduling.heartbeat_interval * 1000));
  w.liveness = static_cast<uint32_t>(m_o.scheduling.liveness);
  w.pixel_encoding = m_encoding;
  w.compression = m_o.compress ? proto::Compression::zstd : proto::Compression::none;
  send(identity, w);
}

void Master::on_request(const std::string& identity, Peer& peer, const proto::WorkRequest& m) {
  if (m_sitting_out.count(peer.id)) return;  // benched for failures: it stays connected, idle
  m_scene_loaded_somewhere = true;  // a worker asks for work once the scene is loaded
  // A relay whose site ran dry once the pool is empty: unstarted blocks moved from another site
  // before copies of them (a copy renders a block twice; a moved block once).
  if (recall_for(peer, m)) return;
  for (const Assignment& a : m_job->request(peer.id, now(), static_cast<int>(m.credits))) {
    if (!send(identity, proto::Assign{m_job_id, a.attempt, a.block})) m_job->undeliverable(peer.id, a.attempt);
  }
}

bool Master::recall_for(const Peer& dry, const proto::WorkRequest& m) {
  std::optional<RecallOrder> order;
  if (!m_recalls.holds_request(m_job->scheduler(), dry.id, static_cast<int>(m.credits), static_cast<int>(m.queued), now(),
                               order))
    return false;
  if (!order) return true;  // a recall for it is on its way: its request waits for the answer
  auto identity = m_identity_of.find(order->from);
  if (identity == m_identity_of.end() || !send(identity->second, proto::Recall{m_job_id, order->attempts})) {
    m_recalls.unsent(*order);
    return false;
  }
  auto from = m_peers.find(identity->second);
  spdlog::info("recalling {} unstarted block(s) from relay {} '{}' for relay {} '{}' ({})", order->attempts.size(), order->from,
               from != m_peers.end() ? from->second.name : "?", dry.id, dry.name,
               order->site_empty ? "its site is empty" : "its site is below --recall-below");
  return true;
}

void Master::on_released(Peer& peer, const proto::Released& m) {
  if (m.job_id != m_job_id) return;
  const RecallAnswer answer = m_recalls.released(*m_job, peer.id, m.attempts);
  if (!answer.recalled) {
    if (answer.given > 0)
      spdlog::info("relay {} '{}' gave back {} block(s): nobody at its site can render them", peer.id, peer.name, answer.given);
    return;
  }
  spdlog::info("relay {} '{}' gave back {} block(s) unstarted", peer.id, peer.name, answer.given);
  if (!answer.serve) return;
  // The dry relay's request was not remembered by the scheduler: serve it now.
  auto identity = m_identity_of.find(answer.serve->first);
  if (identity == m_identity_of.end()) return;
  auto p = m_peers.find(identity->second);
  if (p != m_peers.end())
    on_request(identity->second, p->second,
               proto::WorkRequest{static_cast<uint32_t>(answer.serve->second.credits),
                                  static_cast<uint32_t>(answer.serve->second.queued)});
}

void Master::on_result(const std::string& identity, Peer& peer, proto::Result& r) {
  const double t = now();
  if (r.job_id != m_job_id) return bad_input(identity, "result for another job");
  switch (m_job->check_lease(peer.id, r.attempt, r.rect)) {
    // Not a lease of this worker, or the rectangle does not match: never commit it.
    case LeaseCheck::unknown_lease: return bad_input(identity, "unknown lease");
    case LeaseCheck::wrong_rectangle: return bad_input(identity, "result rectangle does not match its lease");
    case LeaseCheck::ok: break;
  }
  // From here on the lease is the peer's own but its payload may be unusable: give the block back.
  auto reject = [&](const std::string& what) {
    m_job->reject(peer.id, r.attempt);
    bad_input(identity, what);
  };
  if (r.encoding != m_encoding) return reject("result in the wrong pixel encoding");
  const size_t pixels = static_cast<size_t>(r.rect.pixels());
  const size_t expected = pixels * proto::bytes_per_pixel(m_encoding);
  const uint64_t wire_bytes = r.pixels.size();
  if (r.compression == proto::Compression::zstd) {
    auto raw = proto::decompress(r.pixels, expected);
    if (!raw) return reject("undecodable compressed pixels");
    r.pixels = std::move(*raw);
  }
  std::vector<uint8_t> decoded;
  if (Status s = proto::decode_pixels(r.pixels, pixels, m_encoding, decoded); !s.ok()) return reject(s.message());

  ResultReply reply = m_job->result(peer.id, r.attempt, t, ResultReport{r.render_seconds, r.queued_seconds, wire_bytes, r.rays, r.fixed_seconds});
  if (reply.outcome != ResultOutcome::accepted) return;  // late: already settled by another copy
  m_journal->record(r.attempt, peer.id, reply.block, r.render_seconds, decoded);
  m_store->place(reply.block, decoded);
  if (m_live) m_live->block_accepted(reply.block, peer.id, decoded);
  for (const Cancel& c : reply.cancels) {
    auto id = m_identity_of.find(c.worker);
    if (id != m_identity_of.end()) send(id->second, proto::Cancel{m_job_id, c.attempt});
  }
}

void Master::on_block_failed(const std::string& identity, Peer& peer, const proto::BlockFailed& m) {
  if (m.job_id != m_job_id) return bad_input(identity, "failure report for another job");
  switch (m_job->check_lease(peer.id, m.attempt, m.rect)) {
    case LeaseCheck::unknown_lease: return;  // settled meanwhile (another copy won, or it was cancelled)
    case LeaseCheck::wrong_rectangle: return bad_input(identity, "failure report's rectangle does not match its lease");
    case LeaseCheck::ok: break;
  }
  const Block& b = m.rect;
  // Back to the pool at once (unless another copy is still being rendered). A relay's failures
  // are its site workers': the relay benches the broken one, not the master the whole site.
  const FailureCount count = m_job->block_failed(peer.id, m.attempt, b, peer.site_workers == 0);
  spdlog::warn("worker {} '{}' could not render block {}x{} at {},{} of frame {} (failure {} of at most {}): {}", peer.id,
               peer.name, b.width, b.height, b.x, b.y, b.frame, count.block_failures, k_max_block_failures, m.reason);
  if (count.block_gives_up && m_block_failure.empty()) {
    m_block_failure = fmt::format("block {}x{} at {},{} of frame {} failed {} times, last on worker {} '{}': {}", b.width,
                                  b.height, b.x, b.y, b.frame, count.block_failures, peer.id, peer.name, m.reason);
  }
  if (count.bench && !m_sitting_out.count(peer.id)) {
    const std::string why = fmt::format("its renderer failed {} blocks in a row, the last with: {}", count.in_row, m.reason);
    spdlog::warn("worker {} '{}' sits the rest of this job out: {}", peer.id, peer.name, why);
    m_sitting_out.insert(peer.id);
    m_last_out_for_the_job = fmt::format("benched being worker {} '{}': {}", peer.id, peer.name, why);
    if (m_live) m_live->worker_sits_out(peer.id, why);
  }
}

void Master::on_asset_request(const std::string& identity, Peer& peer, const proto::AssetRequest& m) {
  for (const std::string& hash : m.hashes) {
    auto it = m_by_hash.find(hash);
    if (it == m_by_hash.end()) {
      bad_input(identity, "request for an unknown asset");
      continue;
    }
    // Once per peer: a flood of requests for a large mesh must not fill memory.
    if (!peer.assets_sent.insert(hash).second) continue;
    auto bytes = read_file_bytes(it->second->path);
    if (!bytes) {
      spdlog::error("cannot read asset '{}' any more", it->second->path);
      continue;
    }
    send(identity, proto::AssetData{hash, std::move(*bytes)});
  }
}

void Master::on_frame(const std::string& identity, const uint8_t* data, size_t size) {
  proto::Decoded d = proto::decode(data, size);
  if (!d.message) return bad_input(identity, d.error);
  auto peer_it = m_peers.find(identity);
  if (auto* hello = std::get_if<proto::Hello>(&*d.message)) return on_hello(identity, *hello);
  if (peer_it == m_peers.end()) {
    // Declared dead, or never said hello: it must (re)join first.
    send(identity, proto::Error{proto::ErrorCode::bad_message, "not joined: send Hello"});
    return;
  }
  Peer& peer = peer_it->second;
  const double t = now();
  m_job->heard(peer.id, t);
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::WorkRequest>) {
          on_request(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::Result>) {
          const proto::WorkRequest next{m.next_credits, m.next_queued};
          on_result(identity, peer, m);
          // The sender's next request, carried along: served once the result has freed its room.
          if (next.credits > 0)
            if (auto again = m_peers.find(identity); again != m_peers.end()) on_request(identity, again->second, next);
        } else if constexpr (std::is_same_v<T, proto::BlockFailed>) {
          on_block_failed(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::Released>) {
          on_released(peer, m);
        } else if constexpr (std::is_same_v<T, proto::AssetRequest>) {
          on_asset_request(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::Heartbeat>) {
          if (m.ping) {
            send(identity, proto::Heartbeat{m.sequence, false});
          } else if (m.sequence == peer.ping_sequence && peer.last_ping_sent >= 0) {
            m_job->round_trip(peer.id, t - peer.last_ping_sent);
          }
        } else if constexpr (std::is_same_v<T, proto::Error>) {
          if (m.code == proto::ErrorCode::scene_failed && m_scene_loaded_somewhere) {
            // Another worker loaded these very files: this one's trouble is its own.
            spdlog::warn("worker {} could not load the scene, which others did: {}", peer.id, m.message);
            m_job->leave(peer.id, t, false);
            forget(peer.id);
          } else if (m.code == proto::ErrorCode::scene_failed) {
            // The worker loaded the very files this master shipped (content-addressed) with the
            // same build: every worker would fail alike, so the job ends instead of waiting.
            if (m_scene_failure.empty()) {
              m_scene_failure = "the scene cannot be loaded (reported by worker " + std::to_string(peer.id) + " '" +
                                peer.name + "', names relative to the scene's folder): " + m.message;
            }
            m_job->leave(peer.id, t, false);
            forget(peer.id);
          } else {
            // The worker cannot take part: its renderer is missing, or another version that may
            // render other pixels (internal), or it refuses the job as this master sent it
            // (bad_message: a value past its protocol's bounds, an option it will not run). It
            // stays connected, idle, and the job goes on without it; refused by every connected
            // worker, the job ends (abort_reason) instead of waiting for one that can take it.
            spdlog::warn("worker {} '{}' sits this job out: {}", peer.id, peer.name, m.message);
            m_sitting_out.insert(peer.id);
            if (m.code == proto::ErrorCode::bad_message)
              m_last_out_for_the_job = fmt::format("refusing it being worker {} '{}': {}", peer.id, peer.name, m.message);
            if (m_live) m_live->worker_sits_out(peer.id, m.message);
          }
        } else {
          bad_input(identity, std::string("unexpected ") + proto::message_name(*d.message));
        }
      },
      *d.message);
}

void Master::heartbeat_round() {
  const double t = now();
  for (auto& [identity, peer] : m_peers) {
    peer.ping_sequence++;
    peer.last_ping_sent = t;
    send(identity, proto::Heartbeat{peer.ping_sequence, true});
  }
  m_last_heartbeat = t;
}

}  // namespace farm::master_detail
