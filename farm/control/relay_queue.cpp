#include "control/relay_queue.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/limits.h"

namespace farm {

int relay_holdable(int threads) { return 2 * std::clamp(threads, 1, 1 << 20); }

double smoothed_seconds(double current, double sample) {
  if (!std::isfinite(sample) || sample < 0 || sample >= k_max_render_seconds) return current;
  return current > 0 ? 0.8 * current + 0.2 * sample : sample;
}

double relay_copy_after(double block_seconds) {
  return block_seconds > 0 ? std::max(1.0, 4 * block_seconds) : -1.0;
}

double RelayCopyGate::copy_after(double now, double upstream_rtt, double block_seconds) const {
  const double wait = upstream_rtt > 0 && std::isfinite(upstream_rtt) ? 2 * upstream_rtt : 1.0;
  if (m_empty_since < 0 || now - m_empty_since < wait) return -1;
  return relay_copy_after(block_seconds);
}

int relay_spare(int spare, double upstream_rtt, double block_seconds, int site_threads) {
  spare = std::max(0, spare);
  if (!(upstream_rtt > 0) || !(block_seconds > 0) || !std::isfinite(upstream_rtt) || !std::isfinite(block_seconds))
    return spare;
  // Bounded so that nonsense times cannot ask for millions: the master caps far lower.
  const double cover = std::ceil(upstream_rtt / block_seconds * std::max(1, site_threads));
  return static_cast<int>(std::clamp(cover, static_cast<double>(spare), 1e6));
}

void RelayQueue::leased(AttemptId upstream, const Block& block) {
  if (!m_leases.emplace(upstream, block).second) return;
  m_queue.push_back(upstream);
}

std::vector<SiteAssignment> RelayQueue::withdrawn(AttemptId upstream) {
  std::vector<SiteAssignment> holders;
  auto lease = m_leases.find(upstream);
  if (lease == m_leases.end()) return holders;
  if (auto locals = m_locals_of.find(upstream); locals != m_locals_of.end()) {
    for (AttemptId local : std::vector<AttemptId>(locals->second)) {
      const Held& h = m_held.at(local);
      holders.push_back({h.worker, local, h.lease});
      drop_holder(local);
    }
  } else {
    m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), upstream), m_queue.end());
  }
  m_leases.erase(lease);
  return holders;
}

bool RelayQueue::drop_holder(AttemptId local) {
  auto held = m_held.find(local);
  if (held == m_held.end()) return false;
  const AttemptId upstream = held->second.lease.upstream;
  if (auto w = m_workers.find(held->second.worker); w != m_workers.end()) {
    count(w->second, -1);
    w->second.holds.erase(local);
    count(w->second, +1);
  }
  m_held.erase(held);
  auto locals = m_locals_of.find(upstream);
  if (locals == m_locals_of.end()) return true;
  locals->second.erase(std::remove(locals->second.begin(), locals->second.end(), local), locals->second.end());
  if (!locals->second.empty()) return false;
  m_locals_of.erase(locals);
  return true;
}

bool RelayQueue::recall(AttemptId upstream) {
  if (m_locals_of.count(upstream)) return false;  // started at the site: it stays
  auto queued = std::find(m_queue.begin(), m_queue.end(), upstream);
  if (queued == m_queue.end()) return false;
  m_queue.erase(queued);
  m_leases.erase(upstream);
  return true;
}

std::vector<AttemptId> RelayQueue::recallable(const std::vector<AttemptId>& upstream) const {
  std::vector<AttemptId> out;
  const std::set<AttemptId> queued(m_queue.begin(), m_queue.end());
  for (AttemptId a : upstream)
    if (queued.count(a) && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  for (auto it = m_queue.rbegin(); it != m_queue.rend() && out.size() < upstream.size(); ++it)
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  return out;
}

int RelayQueue::wanted(int spare) const {
  if (m_workers.empty()) return 0;
  const int target = m_sums.capacity + std::max(0, spare);
  return std::max(0, target - static_cast<int>(m_leases.size()));
}

void RelayQueue::worker_joined(WorkerId worker, int threads) {
  auto [it, fresh] = m_workers.try_emplace(worker);
  SiteWorker& w = it->second;
  if (!fresh) count(w, -1);  // a repeated hello may change its threads
  w.threads = std::max(1, threads);
  count(w, +1);
}

void RelayQueue::count(const SiteWorker& w, int sign) {
  m_sums.threads += sign * w.threads;
  m_sums.capacity += sign * relay_holdable(w.threads);
  m_sums.idle_threads += sign * std::max(0, w.threads - static_cast<int>(w.holds.size()));
}

std::vector<SiteAssignment> RelayQueue::worker_left(WorkerId worker) {
  std::vector<SiteAssignment> held;
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return held;
  // Back to the front, in the master's order (its ids grow with each lease), unless another
  // worker holds a copy.
  std::vector<AttemptId> back;
  for (AttemptId local : std::set<AttemptId>(it->second.holds)) {
    const RelayLease lease = m_held.at(local).lease;
    held.push_back({worker, local, lease});
    if (drop_holder(local)) back.push_back(lease.upstream);
  }
  std::sort(back.begin(), back.end());
  m_queue.insert(m_queue.begin(), back.begin(), back.end());
  count(it->second, -1);
  m_workers.erase(it);
  return held;
}

std::vector<SiteAssignment> RelayQueue::request(WorkerId worker, int credits, double now, double copy_after) {
  std::vector<SiteAssignment> out;
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return out;
  SiteWorker& w = it->second;
  // Threads of the other workers with nothing to render: a block queued here behind a busy
  // thread must not wait while one of theirs is idle (it could not be taken back).
  const int others_free = m_sums.idle_threads - std::max(0, w.threads - static_cast<int>(w.holds.size()));
  const int room = relay_holdable(w.threads) - static_cast<int>(w.holds.size());
  auto hand_out = [&](AttemptId upstream, bool copy) {
    const AttemptId local = m_next_local++;
    RelayLease lease{upstream, m_leases.at(upstream)};
    m_held[local] = Held{worker, lease, now};
    m_locals_of[upstream].push_back(local);
    count(w, -1);
    w.holds.insert(local);
    count(w, +1);
    out.push_back({worker, local, lease, copy});
  };
  for (int i = 0; i < std::min(credits, room) && !m_queue.empty(); ++i) {
    const bool spare = static_cast<int>(w.holds.size()) >= w.threads;
    if (spare && static_cast<int>(m_queue.size()) <= others_free) break;
    const AttemptId upstream = m_queue.front();
    m_queue.pop_front();
    hand_out(upstream, false);
  }
  // Nothing queued: an idle thread takes a copy of the block another worker has held longest
  // (the lowest local id with one holder) if that is past the threshold; never a second copy,
  // never its own block.
  while (copy_after >= 0 && m_queue.empty() && static_cast<int>(out.size()) < credits &&
         static_cast<int>(w.holds.size()) < w.threads) {
    std::optional<AttemptId> oldest;
    for (const auto& [local, h] : m_held) {
      if (h.worker == worker || m_locals_of.at(h.lease.upstream).size() > 1) continue;
      if (now - h.since >= copy_after) oldest = h.lease.upstream;
      break;  // m_held is ordered by local id: the first one found was handed out first
    }
    if (!oldest) break;
    hand_out(*oldest, true);
  }
  return out;
}

std::optional<RelayLease> RelayQueue::finished(WorkerId worker, AttemptId local, std::vector<SiteAssignment>* cancels) {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return std::nullopt;
  const RelayLease lease = held->second.lease;
  for (AttemptId other : std::vector<AttemptId>(m_locals_of.at(lease.upstream))) {
    if (other != local && cancels) cancels->push_back({m_held.at(other).worker, other, lease});
    drop_holder(other);
  }
  m_leases.erase(lease.upstream);
  return lease;
}

std::optional<RelayLease> RelayQueue::failed(WorkerId worker, AttemptId local) {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return std::nullopt;
  const RelayLease lease = held->second.lease;
  if (!drop_holder(local)) return std::nullopt;  // a copy goes on elsewhere
  m_leases.erase(lease.upstream);
  return lease;
}

void RelayQueue::undeliverable(WorkerId worker, AttemptId local) {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return;
  const AttemptId upstream = held->second.lease.upstream;
  if (drop_holder(local)) m_queue.push_front(upstream);
}

std::optional<RelayLease> RelayQueue::held_by(WorkerId worker, AttemptId local) const {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return std::nullopt;
  return held->second.lease;
}

std::vector<SiteAssignment> RelayQueue::clear_leases() {
  std::vector<SiteAssignment> out;
  for (const auto& [local, h] : m_held) out.push_back({h.worker, local, h.lease});
  m_leases.clear();
  m_queue.clear();
  m_held.clear();
  m_locals_of.clear();
  for (auto& [id, w] : m_workers) {
    count(w, -1);
    w.holds.clear();
    count(w, +1);
  }
  return out;
}

int RelayQueue::site_threads() const { return m_sums.threads; }

std::vector<WorkerId> RelayQueue::workers() const {
  std::vector<WorkerId> out;
  for (const auto& [id, w] : m_workers) out.push_back(id);
  return out;
}

}  // namespace farm
