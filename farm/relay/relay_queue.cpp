#include "relay/relay_queue.h"

#include <algorithm>

namespace farm {

int relay_holdable(int threads) { return 2 * std::clamp(threads, 1, 1 << 20); }

void RelayQueue::leased(AttemptId upstream, const Block& block) {
  if (!m_leases.emplace(upstream, block).second) return;
  m_queue.push_back(upstream);
}

std::optional<SiteAssignment> RelayQueue::withdrawn(AttemptId upstream) {
  auto lease = m_leases.find(upstream);
  if (lease == m_leases.end()) return std::nullopt;
  std::optional<SiteAssignment> holder;
  if (auto local = m_local_of.find(upstream); local != m_local_of.end()) {
    auto held = m_held.find(local->second);
    holder = SiteAssignment{held->second.worker, local->second, held->second.lease};
    if (auto w = m_workers.find(held->second.worker); w != m_workers.end()) w->second.holds.erase(local->second);
    m_held.erase(held);
    m_local_of.erase(local);
  } else {
    m_queue.erase(std::remove(m_queue.begin(), m_queue.end(), upstream), m_queue.end());
  }
  m_leases.erase(lease);
  return holder;
}

bool RelayQueue::recall(AttemptId upstream) {
  if (m_local_of.count(upstream)) return false;  // started at the site: it stays
  auto queued = std::find(m_queue.begin(), m_queue.end(), upstream);
  if (queued == m_queue.end()) return false;
  m_queue.erase(queued);
  m_leases.erase(upstream);
  return true;
}

int RelayQueue::wanted(int spare) const {
  int capacity = 0;
  for (const auto& [id, w] : m_workers) capacity += relay_holdable(w.threads);
  const int target = capacity + std::max(0, spare);
  return std::max(0, target - static_cast<int>(m_leases.size()));
}

void RelayQueue::worker_joined(WorkerId worker, int threads) { m_workers[worker].threads = std::max(1, threads); }

void RelayQueue::worker_left(WorkerId worker) {
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return;
  // Back to the front, in the master's order (its ids grow with each lease).
  std::vector<AttemptId> back;
  for (AttemptId local : it->second.holds) {
    auto held = m_held.find(local);
    back.push_back(held->second.lease.upstream);
    m_local_of.erase(held->second.lease.upstream);
    m_held.erase(held);
  }
  std::sort(back.begin(), back.end());
  m_queue.insert(m_queue.begin(), back.begin(), back.end());
  m_workers.erase(it);
}

std::vector<SiteAssignment> RelayQueue::request(WorkerId worker, int credits) {
  std::vector<SiteAssignment> out;
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return out;
  SiteWorker& w = it->second;
  // Threads of the other workers with nothing to render: a block queued here behind a busy
  // thread must not wait while one of theirs is idle (it could not be taken back).
  int others_free = 0;
  for (const auto& [id, o] : m_workers)
    if (id != worker) others_free += std::max(0, o.threads - static_cast<int>(o.holds.size()));
  const int room = relay_holdable(w.threads) - static_cast<int>(w.holds.size());
  for (int i = 0; i < std::min(credits, room) && !m_queue.empty(); ++i) {
    const bool spare = static_cast<int>(w.holds.size()) >= w.threads;
    if (spare && static_cast<int>(m_queue.size()) <= others_free) break;
    const AttemptId upstream = m_queue.front();
    m_queue.pop_front();
    const AttemptId local = m_next_local++;
    RelayLease lease{upstream, m_leases.at(upstream)};
    m_held[local] = Held{worker, lease};
    m_local_of[upstream] = local;
    w.holds.insert(local);
    out.push_back({worker, local, lease});
  }
  return out;
}

std::optional<RelayLease> RelayQueue::finished(WorkerId worker, AttemptId local) {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return std::nullopt;
  RelayLease lease = held->second.lease;
  if (auto w = m_workers.find(worker); w != m_workers.end()) w->second.holds.erase(local);
  m_local_of.erase(lease.upstream);
  m_leases.erase(lease.upstream);
  m_held.erase(held);
  return lease;
}

void RelayQueue::undeliverable(WorkerId worker, AttemptId local) {
  auto held = m_held.find(local);
  if (held == m_held.end() || held->second.worker != worker) return;
  const AttemptId upstream = held->second.lease.upstream;
  if (auto w = m_workers.find(worker); w != m_workers.end()) w->second.holds.erase(local);
  m_local_of.erase(upstream);
  m_held.erase(held);
  m_queue.push_front(upstream);
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
  m_local_of.clear();
  for (auto& [id, w] : m_workers) w.holds.clear();
  return out;
}

int RelayQueue::site_threads() const {
  int threads = 0;
  for (const auto& [id, w] : m_workers) threads += w.threads;
  return threads;
}

std::vector<WorkerId> RelayQueue::workers() const {
  std::vector<WorkerId> out;
  for (const auto& [id, w] : m_workers) out.push_back(id);
  return out;
}

}  // namespace farm
