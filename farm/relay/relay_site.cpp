// The relay's site side: the relay as the master of the site's workers (relay_state.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "base/limits.h"
#include "relay/relay_state.h"

namespace farm::relay_detail {

void Relay::welcome(const std::string& identity) {
  if (m_state != State::ready) return;  // welcomed once the site's copy of the job is complete
  send_site(identity, m_job);
}

void Relay::on_hello(ServedPeer& p, bool joined, const ServedPeer& /*before*/) {
  if (joined) {
    m_queue.worker_joined(p.id, p.threads);
    spdlog::info("relay: site worker {} '{}' joined with {} thread(s)", p.id, p.name, p.threads);
    if (m_o.on_site_worker_change) m_o.on_site_worker_change(p.name, true);
  }
  // Enough of the site is there (or its size was given): join, announcing its threads.
  if (m_state == State::detached && !m_up && static_cast<int>(m_endpoint->peers().size()) >= std::max(1, m_o.workers)) {
    join_upstream();
    m_link.joined(now());
  }
  announce_if_changed();
  welcome(p.identity);
}

void Relay::on_site_assets(ServedPeer& peer, const proto::AssetRequest& m) {
  m_endpoint->send_assets(peer, m.hashes, [&](const std::string& hash) {
    AssetLookup found;
    // Only the job's own files, by the hashes its manifest names: never a path a peer chose.
    bool known = false;
    for (const proto::AssetRef& a : m_job.assets) known |= a.hash == hash;
    if (!known) return found;
    if (std::optional<std::vector<uint8_t>> bytes = m_cache.has(hash) ? m_cache.read(hash) : std::nullopt) {
      found.found = AssetLookup::Found::bytes;
      found.bytes = std::move(*bytes);
    } else {
      found.found = AssetLookup::Found::unreadable;
      found.why = "not in the site's cache '" + m_cache.root() + "'";
    }
    return found;
  });
}

void Relay::serve(ServedPeer& peer) {
  int& wanting = m_wanting[peer.id];
  if (m_state != State::ready || wanting <= 0 || m_failures.benched(peer.id)) return;
  const double copy_after_seconds = copy_after();
  const std::vector<SiteAssignment> given = m_queue.request(peer.id, wanting, now(), copy_after_seconds);
  for (size_t i = 0; i < given.size(); ++i) {
    const SiteAssignment& a = given[i];
    if (!send_site(peer.identity, proto::Assign{m_job.job_id, a.local, a.lease.block})) {
      // This one and the rest of the batch back to the front of the queue, in their order.
      for (size_t j = given.size(); j-- > i;) m_queue.undeliverable(peer.id, given[j].local);
      break;
    }
    --wanting;
    if (a.copy) {
      spdlog::info("relay: site worker {} '{}' renders a copy of a block held for {:.1f} s or more", peer.id, peer.name,
                   copy_after_seconds);
      continue;  // the block did not wait here: its first holder has it
    }
    if (auto at = m_leased_at.find(a.lease.upstream); at != m_leased_at.end()) {
      m_waited[a.lease.upstream] += now() - at->second;  // a block given back and out again adds up
      at->second = now();
    }
  }
}

// Asking the master is the callers' business: only what frees its cap for this relay (a result,
// a cancel) or raises the site's want (a worker's request, a site change) is worth a message; an
// Assign arriving is not (asking again at once drew one empty answer per Assign).
void Relay::serve_all() {
  for (auto& [identity, peer] : m_endpoint->peers()) serve(peer);
}

void Relay::on_site_result(ServedPeer& peer, proto::Result& r) {
  std::optional<RelayLease> lease = m_queue.held_by(peer.id, r.attempt);
  if (r.job_id != m_job.job_id || !lease) return;  // cancelled meanwhile, or another job's: dropped here
  if (!(lease->block == r.rect)) {
    spdlog::warn("relay: site worker {} sent a result whose rectangle is not its block's; ignored", peer.id);
    return;
  }
  std::vector<SiteAssignment> cancels;
  m_queue.finished(peer.id, r.attempt, &cancels);
  for (const SiteAssignment& other : cancels)  // the first result wins; the copy's holder stops
    m_endpoint->send(other.worker, proto::Cancel{m_job.job_id, other.local});
  m_failures.succeeded(peer.id);  // its renderer works
  m_leased_at.erase(lease->upstream);
  m_block_seconds = smoothed_seconds(m_block_seconds, r.render_seconds);  // nonsense times are ignored
  r.attempt = lease->upstream;  // passed on unchanged otherwise: the master checks the pixels
  // The time the block waited here is queueing, not the link's: the master's link estimate and
  // waiting times must not see a slow link where the relay only held the block ahead.
  if (auto waited = m_waited.find(lease->upstream); waited != m_waited.end()) {
    r.queued_seconds += waited->second;
    m_waited.erase(waited);
  }
  r.next_credits = r.next_queued = 0;  // the site worker's own ask is served here; ours rides later
  m_results_up.push_back(std::move(r));  // forwarded at the end of this poll turn (flush_upstream)
}

void Relay::on_site_failed(ServedPeer& peer, proto::BlockFailed& f) {
  std::optional<RelayLease> lease = m_queue.held_by(peer.id, f.attempt);
  if (f.job_id != m_job.job_id || !lease || !(lease->block == f.rect)) return;
  if (m_queue.failed(peer.id, f.attempt)) {  // unless a copy of it goes on at the site
    m_waited.erase(lease->upstream);
    m_leased_at.erase(lease->upstream);
    f.attempt = lease->upstream;
    send_up(f);  // the master counts the block's failures and decides where it goes next
  }
  // As the master does with a worker (the same RendererFailures): a broken node must not use up
  // the blocks' tries. Its other blocks go to the site's other workers, and the master hears of a
  // smaller site. The master counts the block's failures.
  if (const FailureCount count = m_failures.failed(peer.id, f.rect); count.bench) {
    spdlog::warn("relay: site worker {} '{}' sits the rest of this job out: its renderer failed {} blocks in a row, the "
                 "last with: {}",
                 peer.id, peer.name, count.in_row, f.reason);
    m_wanting[peer.id] = 0;
    // What it still held goes to the others; it stops rendering those.
    for (const SiteAssignment& a : m_queue.worker_left(peer.id)) send_site(peer.identity, proto::Cancel{m_job.job_id, a.local});
    announce_if_changed();
    serve_all();
    check_site_left();
  }
}

void Relay::check_site_left() {
  if (m_state != State::ready || !m_queue.workers().empty()) return;
  if (m_queue.queued() > 0 && give_back(m_queue.queued_ids()))
    spdlog::warn("relay: no site worker can render: the site's queued blocks go back to the master");
  size_t benched = 0;
  for (const auto& [identity, peer] : m_endpoint->peers()) benched += m_failures.benched(peer.id) ? 1 : 0;
  if (benched > 0 && benched == m_endpoint->peers().size() && !m_said_sitting_out) {
    // As a worker whose renderer cannot take part: the master goes on without this site (and
    // ends the job, saying why, if nobody else is left).
    m_said_sitting_out = send_up(proto::Error{
        proto::ErrorCode::internal,
        "every worker of relay '" + m_name + "' sits this job out: their renderers failed " +
            std::to_string(k_max_failures_in_row) + " blocks in a row"});
  }
}

void Relay::wants(ServedPeer& peer, uint32_t credits) {
  m_wanting[peer.id] = static_cast<int>(std::min<uint32_t>(credits, 1024));
  m_site_loaded = m_state == State::ready;
}

void Relay::on_message(ServedPeer& peer, proto::Message& message) {
  if (auto* request = std::get_if<proto::WorkRequest>(&message)) {
    wants(peer, request->credits);
    serve(peer);
    m_ask_due = true;
  } else if (auto* result = std::get_if<proto::Result>(&message)) {
    // Its next request, carried along; not one from a job that is over (the worker has not loaded
    // this one yet, and would drop what it got).
    const uint32_t next = result->job_id == m_job.job_id ? result->next_credits : 0;
    on_site_result(peer, *result);
    if (next > 0) wants(peer, next);
    serve(peer);
    m_ask_due = true;
  } else if (auto* failed = std::get_if<proto::BlockFailed>(&message)) {
    on_site_failed(peer, *failed);
    m_ask_due = true;
  } else if (const auto* assets = std::get_if<proto::AssetRequest>(&message)) {
    on_site_assets(peer, *assets);
  } else if (const auto* e = std::get_if<proto::Error>(&message)) {
    // A scene every worker would fail on ends the job at the master; a worker's own trouble is
    // its own (it is forgotten when it goes silent).
    spdlog::warn("relay: site worker {} '{}' reports: {}", peer.id, peer.name, e->message);
    if (e->code == proto::ErrorCode::scene_failed) send_up(*e);
  } else {
    m_endpoint->bad_input(peer.identity, std::string("unexpected ") + proto::message_name(message));
  }
}

void Relay::site_worker_left(const ServedPeer& peer) {
  m_queue.worker_left(peer.id);
  m_failures.forget(peer.id);
  m_wanting.erase(peer.id);
  if (m_o.on_site_worker_change) m_o.on_site_worker_change(peer.name, false);
}

void Relay::site_changed() {
  check_site_left();
  announce_if_changed();
  serve_all();
  m_ask_due = true;  // the site's want changed
}

void Relay::on_quarantined(ServedPeer& peer) {
  site_worker_left(peer);
  // The site's size is announced once the endpoint has forgotten it (site_changed reads its peers).
  m_site_changed = true;
}

void Relay::forget_silent_workers() {
  const double limit = interval() * liveness();
  std::vector<WorkerId> silent;
  for (const auto& [identity, peer] : m_endpoint->peers()) {
    if (now() - peer.last_heard <= limit) continue;
    spdlog::warn("relay: site worker {} '{}' is silent for {:.1f} s: its blocks go to the site's other workers", peer.id,
                 peer.name, limit);
    site_worker_left(peer);
    silent.push_back(peer.id);
  }
  for (WorkerId id : silent) m_endpoint->forget(id);
  site_changed();
}

}  // namespace farm::relay_detail
