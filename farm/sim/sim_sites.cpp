#include "sim/sim_sites.h"

#include <algorithm>

namespace farm {

void SimRelay::worker_joined(WorkerId worker, int threads, double now) {
  m_queue.worker_joined(worker, threads);
  m_last_heard[worker] = now;
}

std::vector<SiteAssignment> SimRelay::worker_request(WorkerId worker, int credits, double now) {
  if (!m_queue.has_worker(worker)) return {};
  m_wanting[worker] = std::min(credits, 1024);
  m_site_loaded = true;  // a worker asks once it has loaded the scene
  return serve(worker, now);
}

std::vector<SiteAssignment> SimRelay::serve(WorkerId worker, double now) {
  int& wanting = m_wanting[worker];
  if (wanting <= 0) return {};
  // An idle thread may take a copy of a block held long inside the site, as the real relay
  // gives (relay_site.cpp): first result wins, the other holder is told (worker_finished).
  m_copy_gate.note(m_queue.queued(), now);
  const double copy_after = m_copy_gate.copy_after(now, 2 * m_spec.latency, m_block_seconds);
  std::vector<SiteAssignment> out = m_queue.request(worker, wanting, now, copy_after);
  wanting -= static_cast<int>(out.size());
  for (const SiteAssignment& a : out) {
    if (a.copy) continue;  // the block did not wait here: its first holder has it
    auto at = m_leased_at.find(a.lease.upstream);
    if (at == m_leased_at.end()) continue;
    m_waited[a.lease.upstream] += now - at->second;  // a block given back and out again adds up
    at->second = now;
  }
  return out;
}

std::vector<SiteAssignment> SimRelay::serve_all(double now) {
  std::vector<SiteAssignment> out;
  for (const WorkerId w : m_queue.workers()) {
    if (m_queue.queued() == 0) break;  // nothing left to hand out (a site of 100 asks often)
    std::vector<SiteAssignment> some = serve(w, now);
    out.insert(out.end(), some.begin(), some.end());
  }
  return out;
}

std::optional<ForwardedResult> SimRelay::worker_finished(WorkerId worker, AttemptId local, double render_seconds) {
  std::vector<SiteAssignment> cancels;
  std::optional<RelayLease> lease = m_queue.finished(worker, local, &cancels);
  if (!lease) return std::nullopt;
  m_block_seconds = smoothed_seconds(m_block_seconds, render_seconds);  // as the real relay (relay_site.cpp)
  ForwardedResult r{*lease, 0, std::move(cancels)};
  if (auto w = m_waited.find(lease->upstream); w != m_waited.end()) r.waited = w->second;
  m_waited.erase(lease->upstream);
  m_leased_at.erase(lease->upstream);
  return r;
}

std::vector<SiteAssignment> SimRelay::worker_left(WorkerId worker, double now) {
  m_queue.worker_left(worker);
  m_wanting.erase(worker);
  m_last_heard.erase(worker);
  return serve_all(now);
}

std::vector<WorkerId> SimRelay::silent_workers(double now, double limit) const {
  std::vector<WorkerId> out;
  for (const auto& [worker, heard_at] : m_last_heard)
    if (now - heard_at > limit) out.push_back(worker);
  return out;
}

std::vector<SiteAssignment> SimRelay::leased(AttemptId upstream, const Block& block, double now) {
  m_queue.leased(upstream, block);
  m_leased_at.emplace(upstream, now);
  return serve_all(now);
}

std::vector<SiteAssignment> SimRelay::withdrawn(AttemptId upstream) {
  m_leased_at.erase(upstream);
  m_waited.erase(upstream);
  return m_queue.withdrawn(upstream);
}

std::vector<AttemptId> SimRelay::recall(const std::vector<AttemptId>& attempts) {
  // As the real relay: those named that are still queued, then as many others, newest first.
  const std::vector<AttemptId> back = m_queue.recallable(attempts);
  for (const AttemptId a : back) {
    m_queue.recall(a);
    m_leased_at.erase(a);
    m_waited.erase(a);
  }
  return back;
}

std::optional<RelayAsk> SimRelay::ask() const {
  if (!m_site_loaded) return std::nullopt;
  const int want = m_queue.wanted(relay_spare(m_spec.spare, 2 * m_spec.latency, m_block_seconds, m_queue.site_threads()));
  if (want <= 0) return std::nullopt;
  return RelayAsk{want, static_cast<int>(m_queue.queued())};
}

}  // namespace farm
