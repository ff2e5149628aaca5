// What a served job does with each message of a worker in it (served_job.h). Its life outside
// the messages: served_job.cpp.
#include <spdlog/spdlog.h>

#include <cmath>

#include "assets/content_hash.h"
#include "master/served_job.h"
#include "protocol/pixel_codec.h"

namespace farm {

void ServedJob::forget(WorkerId worker) {
  m_members.erase(worker);
  m_sitting_out.erase(worker);
  m_sit_out_why.erase(worker);
  // Recalls from or for it are moot: its leases went back to the pool with it.
  m_recalls.relay_gone(worker);
}

// Cut off for its bad messages: it leaves the scheduler as a dead worker would, its leases go
// back to the pool, and from now on its frames are dropped before decoding.
void ServedJob::on_quarantined(ServedPeer& peer) {
  m_job->leave(peer.id, now(), true);
  m_host.drop(peer.id);
}


void ServedJob::release(WorkerId worker, bool tell) {
  if (!m_members.count(worker)) return;
  if (tell) m_endpoint->send(worker, proto::JobDone{m_job_id});
  if (m_job->scheduler().has_worker(worker)) m_job->leave(worker, now(), false);
  forget(worker);
}

void ServedJob::on_hello(ServedPeer& p, bool joined, const ServedPeer& before) {
  // Its render slots: a POV-Ray worker runs several povray processes per thread (they mostly
  // wait), and the policies must queue work for all of them.
  const int per_thread = m_backend.renders_per_thread;
  if (joined) {
    m_members.insert(p.id);
    m_job->join(p.id, p.name, p.threads * per_thread, now(), p.site_workers);
    if (p.site_workers > 0) {
      spdlog::info("relay {} '{}' joined for a site of {} worker(s), {} thread(s)", p.id, p.name, p.site_workers,
                   p.threads);
    } else if (per_thread > 1) {
      spdlog::info("worker {} '{}' joined with {} thread(s), {} blocks at once", p.id, p.name, p.threads,
                   p.threads * per_thread);
    } else {
      spdlog::info("worker {} '{}' joined with {} thread(s)", p.id, p.name, p.threads);
    }
    if (p.site_workers > 0) m_recalls.relay_joined(p.id);
  } else if (p.threads != before.threads || p.site_workers != before.site_workers) {
    // A relay whose site grew or shrank: the policy sizes its leases by the new counts.
    if (p.site_workers > 0) m_recalls.relay_joined(p.id);
    m_job->resize(p.id, p.threads * per_thread, p.site_workers, now());
    spdlog::info("{} {} '{}' now has {} thread(s){}", p.site_workers > 0 ? "relay" : "worker", p.id, p.name, p.threads,
                 p.site_workers > 0 ? fmt::format(" and {} site worker(s)", p.site_workers) : std::string());
  }
  welcome(p);
}

void ServedJob::welcome(const ServedPeer& peer) {
  proto::Welcome w;
  w.job_id = m_job_id;
  w.scene_name = m_manifest.front().ref.name;
  for (const ManifestEntry& e : m_manifest) w.assets.push_back(e.ref);
  w.settings = m_settings;
  w.heartbeat_ms = static_cast<uint32_t>(std::lround(m_o.scheduling.heartbeat_interval * 1000));
  w.liveness = static_cast<uint32_t>(m_o.scheduling.liveness);
  w.pixel_encoding = m_encoding;
  w.compression = m_o.compress ? proto::Compression::zstd : proto::Compression::none;
  send(peer.identity, w);
}

void ServedJob::on_request(ServedPeer& peer, const proto::WorkRequest& m) {
  if (m_sitting_out.count(peer.id)) return;  // benched for failures: it stays connected, idle
  m_scene_loaded_somewhere = true;  // a worker asks for work once the scene is loaded
  // A relay whose site ran dry once the pool is empty: unstarted blocks moved from another site
  // before copies of them (a copy renders a block twice; a moved block once).
  if (recall_for(peer, m)) return;
  for (const Assignment& a : m_job->request(peer.id, now(), static_cast<int>(m.credits))) {
    if (!send(peer.identity, proto::Assign{m_job_id, a.attempt, a.block})) m_job->undeliverable(peer.id, a.attempt);
  }
}

bool ServedJob::recall_for(const ServedPeer& dry, const proto::WorkRequest& m) {
  std::optional<RecallOrder> order;
  if (!m_recalls.holds_request(m_job->scheduler(), dry.id, static_cast<int>(m.credits), static_cast<int>(m.queued), now(),
                               order))
    return false;
  if (!order) return true;  // a recall for it is on its way: its request waits for the answer
  if (!m_endpoint->send(order->from, proto::Recall{m_job_id, order->attempts})) {
    m_recalls.unsent(*order);
    return false;
  }
  const ServedPeer* from = m_endpoint->find(order->from);
  spdlog::info("recalling {} unstarted block(s) from relay {} '{}' for relay {} '{}' ({})", order->attempts.size(), order->from,
               from ? from->name : "?", dry.id, dry.name,
               order->site_empty ? "its site is empty" : "its site is below --recall-below");
  return true;
}

void ServedJob::on_released(ServedPeer& peer, const proto::Released& m) {
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
  if (ServedPeer* p = m_endpoint->find(answer.serve->first))
    on_request(*p, proto::WorkRequest{static_cast<uint32_t>(answer.serve->second.credits),
                                  static_cast<uint32_t>(answer.serve->second.queued)});
}

void ServedJob::on_result(ServedPeer& peer, proto::Result& r) {
  const double t = now();
  auto bad_input = [&](const std::string& what) { m_endpoint->bad_input(peer.identity, what); };
  if (r.job_id != m_job_id) return bad_input("result for another job");
  switch (m_job->check_lease(peer.id, r.attempt, r.rect)) {
    // Not a lease of this worker, or the rectangle does not match: never commit it.
    case LeaseCheck::unknown_lease: return bad_input("unknown lease");
    case LeaseCheck::wrong_rectangle: return bad_input("result rectangle does not match its lease");
    case LeaseCheck::ok: break;
  }
  // From here on the lease is the peer's own but its payload may be unusable: give the block back.
  auto reject = [&](const std::string& what) {
    m_job->reject(peer.id, r.attempt);
    bad_input(what);
  };
  if (r.encoding != m_encoding) return reject("result in the wrong pixel encoding");
  const size_t pixels = static_cast<size_t>(r.rect.pixels());
  const size_t expected = pixels * result_bytes_per_pixel();
  const uint64_t wire_bytes = r.pixels.size();
  if (r.compression == proto::Compression::zstd) {
    auto raw = proto::decompress(r.pixels, expected);
    if (!raw) return reject("undecodable compressed pixels");
    r.pixels = std::move(*raw);
  }
  std::vector<uint8_t> decoded;
  if (Status s = proto::decode_pixels(r.pixels, pixels, m_encoding, decoded, carried_floats()); !s.ok()) return reject(s.message());

  ResultReply reply = m_job->result(peer.id, r.attempt, t, ResultReport{r.render_seconds, r.queued_seconds, wire_bytes, r.rays, r.fixed_seconds});
  if (reply.outcome != ResultOutcome::accepted) return;  // late: already settled by another copy
  m_journal->record(r.attempt, peer.id, reply.block, r.render_seconds, decoded);
  m_store->place(reply.block, decoded);
  if (m_live) m_live->block_accepted(reply.block, peer.id, decoded);
  for (const Cancel& c : reply.cancels) m_endpoint->send(c.worker, proto::Cancel{m_job_id, c.attempt});
}

void ServedJob::on_block_failed(ServedPeer& peer, const proto::BlockFailed& m) {
  if (m.job_id != m_job_id) return m_endpoint->bad_input(peer.identity, "failure report for another job");
  switch (m_job->check_lease(peer.id, m.attempt, m.rect)) {
    case LeaseCheck::unknown_lease: return;  // settled meanwhile (another copy won, or it was cancelled)
    case LeaseCheck::wrong_rectangle:
      return m_endpoint->bad_input(peer.identity, "failure report's rectangle does not match its lease");
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
    m_sit_out_why[peer.id] = why;
    m_last_out_for_the_job = fmt::format("benched being worker {} '{}': {}", peer.id, peer.name, why);
    if (m_live) m_live->worker_sits_out(peer.id, why);
  }
}

void ServedJob::on_asset_request(ServedPeer& peer, const proto::AssetRequest& m) {
  m_endpoint->send_assets(peer, m.hashes, [&](const std::string& hash) {
    AssetLookup found;
    auto it = m_by_hash.find(hash);
    if (it == m_by_hash.end()) return found;  // unknown
    if (auto bytes = read_file_bytes(it->second->path)) {
      found.found = AssetLookup::Found::bytes;
      found.bytes = std::move(*bytes);
    } else {
      found.found = AssetLookup::Found::unreadable;
      found.why = "'" + it->second->path + "'";
    }
    return found;
  });
}

void ServedJob::on_message(ServedPeer& peer, proto::Message& message) {
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::WorkRequest>) {
          on_request(peer, m);
        } else if constexpr (std::is_same_v<T, proto::Result>) {
          const proto::WorkRequest next{m.next_credits, m.next_queued};
          const WorkerId id = peer.id;
          on_result(peer, m);
          // The sender's next request, carried along: served once the result has freed its room.
          if (next.credits > 0)
            if (ServedPeer* again = m_endpoint->find(id)) on_request(*again, next);
        } else if constexpr (std::is_same_v<T, proto::BlockFailed>) {
          on_block_failed(peer, m);
        } else if constexpr (std::is_same_v<T, proto::Released>) {
          on_released(peer, m);
        } else if constexpr (std::is_same_v<T, proto::AssetRequest>) {
          on_asset_request(peer, m);
        } else if constexpr (std::is_same_v<T, proto::Error>) {
          on_error(peer, m);
        } else {
          m_endpoint->bad_input(peer.identity, std::string("unexpected ") + proto::message_name(message));
        }
      },
      message);
}

void ServedJob::on_error(ServedPeer& peer, const proto::Error& m) {
  const double t = now();
  if (m.code == proto::ErrorCode::scene_failed && m_scene_loaded_somewhere) {
    // Another worker loaded these very files: this one's trouble is its own.
    spdlog::warn("worker {} could not load the scene, which others did: {}", peer.id, m.message);
    m_job->leave(peer.id, t, false);
    m_host.drop(peer.id);
  } else if (m.code == proto::ErrorCode::scene_failed) {
    // The worker loaded the very files this master shipped (content-addressed) with the
    // same build: every worker would fail alike, so the job ends instead of waiting.
    if (m_scene_failure.empty()) {
      m_scene_failure = "the scene cannot be loaded (reported by worker " + std::to_string(peer.id) + " '" + peer.name +
                        "', names relative to the scene's folder): " + m.message;
    }
    m_job->leave(peer.id, t, false);
    m_host.drop(peer.id);
  } else {
    // The worker cannot take part: its renderer is missing, or another version that may
    // render other pixels (internal), or it refuses the job as this master sent it
    // (bad_message: a value past its protocol's bounds, an option it will not run). It
    // stays connected, idle, and the job goes on without it; refused by every connected
    // worker, the job ends (abort_reason) instead of waiting for one that can take it.
    spdlog::warn("worker {} '{}' sits this job out: {}", peer.id, peer.name, m.message);
    m_sitting_out.insert(peer.id);
    m_sit_out_why[peer.id] = m.message;
    if (m.code == proto::ErrorCode::bad_message)
      m_last_out_for_the_job = fmt::format("refusing it being worker {} '{}': {}", peer.id, peer.name, m.message);
    if (m_live) m_live->worker_sits_out(peer.id, m.message);
  }
}

}  // namespace farm
