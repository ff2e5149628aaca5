// Seed 002's supervisor between sites: which relay gives back which unstarted leases when another
// runs dry (scheduler.h, plan_recall). A query: the master acts on it (Recall to the relay, then
// release() for what comes back), so traces and replays see only the releases.
#include <algorithm>

#include "scheduler/scheduler.h"

namespace farm {

namespace {

struct Unstarted {
  std::vector<std::pair<AttemptId, double>> newest_first;  // attempt, its block's work
  double work = 0;
};

}  // namespace

Scheduler::RecallPlan Scheduler::plan_recall(WorkerId dry, double below_fraction, const std::map<WorkerId, int>& queued,
                                             const std::set<AttemptId>& in_flight) const {
  RecallPlan plan;
  auto d = m_workers.find(dry);
  if (d == m_workers.end() || d->second.members <= 0 || !m_pool.empty()) return plan;
  // A relay's newest leases, as many as it said wait in its queue (its queue is in the master's
  // order); without a word from it, all but its oldest `threads`.
  auto unstarted = [&](const Worker& w) {
    Unstarted u;
    std::vector<AttemptId> ids = w.leases;
    std::sort(ids.begin(), ids.end());
    auto said = queued.find(w.id);
    const int waiting = said != queued.end() ? std::min(said->second, static_cast<int>(ids.size()))
                                             : std::max(0, static_cast<int>(ids.size()) - w.threads);
    for (size_t i = ids.size(); i-- > ids.size() - static_cast<size_t>(waiting);) {
      if (in_flight.count(ids[i])) continue;
      auto lease = m_leases.find(ids[i]);
      if (lease == m_leases.end()) continue;
      auto out = m_outstanding.find(lease->second.block_id);
      const double work = out != m_outstanding.end() ? out->second.work : 0.0;
      u.newest_first.push_back({ids[i], work});
      u.work += work;
    }
    return u;
  };
  const Worker& dw = d->second;
  if (!(dw.work_per_second > 0) || !(m_known_speed > 0)) return plan;
  const Unstarted du = unstarted(dw);
  const bool empty = du.newest_first.empty();
  // The time the job has left if every site worked to the end together.
  const double ideal = m_outstanding_work / m_known_speed;
  if (!empty && !(below_fraction > 0 && du.work / dw.work_per_second < below_fraction * ideal)) return plan;

  const Worker* victim = nullptr;
  Unstarted vu;
  double most = 0;
  for (const auto& [id, w] : m_workers) {
    if (id == dry || w.members <= 0 || !(w.work_per_second > 0)) continue;
    Unstarted u = unstarted(w);
    const double left = u.work / w.work_per_second;
    if (left > most) {
      most = left;
      victim = &w;
      vu = std::move(u);
    }
  }
  if (!victim) return plan;
  // Even them out: (Uv - W) / rv = (Ud + W) / rd.
  const double rv = victim->work_per_second, rd = dw.work_per_second;
  const double move = (vu.work * rd - du.work * rv) / (rv + rd);
  if (!(move > 0)) return plan;
  double moved = 0;
  for (const auto& [attempt, work] : vu.newest_first) {
    if (moved + work > move) {
      // One block larger than the whole amount still moves if that leaves the two closer.
      if (plan.attempts.empty() && work < 2 * move) plan.attempts.push_back(attempt);
      break;
    }
    plan.attempts.push_back(attempt);
    moved += work;
  }
  if (!plan.attempts.empty()) {
    plan.from = victim->id;
    plan.site_empty = empty;
  }
  return plan;
}

}  // namespace farm
