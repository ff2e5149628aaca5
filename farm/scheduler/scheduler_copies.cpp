// The scheduler's copies of outstanding blocks (docs/architecture.md, Core algorithm, step 4):
// the index of copy candidates by expected finish, the copy given once the pool drains, and the
// policy's early copies of badly overdue blocks. First result wins (Scheduler::do_result).
#include <algorithm>
#include <limits>

#include "scheduler/scheduler.h"

namespace farm {

void Scheduler::index_copy_candidate(BlockId id) {
  Outstanding& o = m_outstanding.at(id);
  if (o.copy_index == 1) m_copy_known.erase({o.copy_key, id});
  if (o.copy_index == 2) m_copy_unknown.erase({o.copy_key, id});
  o.copy_index = 0;
  if (o.attempts.empty() || o.attempts.size() >= static_cast<size_t>(m_config.max_copies)) return;
  const Lease& first = m_leases.at(o.attempts.front());
  const Worker& holder = m_workers.at(first.worker);
  if (holder.work_per_second > 0) {
    o.copy_index = 1;
    // Behind what the holder had queued then, at its speed over all its threads.
    o.copy_key = first.assigned_at + (first.work_ahead + o.work) / holder.work_per_second;
    m_copy_known.insert({o.copy_key, id});
  } else {
    o.copy_index = 2;
    o.copy_key = first.assigned_at;
    m_copy_unknown.insert({o.copy_key, id});
  }
}

std::optional<Assignment> Scheduler::assign_copy(Worker& w, Seconds now) {
  // The pool is empty: give a copy of the outstanding block expected to finish last: its
  // first lease's start plus the block's pixels at the holder's measured speed; with no speed
  // known yet, the oldest lease counts as last (expected at now + its age). Never a block
  // this worker already holds.
  // A block past its expected finish is taken to need as long again (now + its delay).
  auto expected_finish = [now](Seconds key) { return key > now ? key : now + (now - key); };
  bool found = false;
  Seconds best_finish = 0;  // expected, as above
  BlockId best = 0;
  auto consider = [&](Seconds finish, BlockId id) {
    if (!found || finish > best_finish || (finish == best_finish && id < best)) {
      found = true;
      best_finish = finish;
      best = id;
    }
  };
  for (auto it = m_copy_known.rbegin(); it != m_copy_known.rend(); ++it) {
    if (held_by(it->second, w.id)) continue;
    consider(expected_finish(it->first), it->second);
    break;
  }
  // The most overdue block, at the other end of the index, may be the one expected last of all:
  // a block whose cost the model got badly wrong is not left to its slow holder behind blocks
  // that merely started late.
  if (auto overdue = most_overdue(w.id, now)) consider(expected_finish(overdue->first), overdue->second);
  for (const auto& [assigned_at, id] : m_copy_unknown) {
    if (held_by(id, w.id)) continue;
    consider(now + (now - assigned_at), id);
    break;
  }
  if (!found) return std::nullopt;
  if (m_policy->copies_need_free_thread() && m_outstanding.at(best).copy_index == 1) {
    // Speculation only where it can win: this worker, measured, must be expected to finish the
    // block (one way out, the render on one thread) before its first holder.
    if (!(w.work_per_second > 0)) return std::nullopt;
    const Seconds finish = now + w.rtt + m_outstanding.at(best).work / (w.work_per_second / w.threads);
    if (finish >= best_finish) return std::nullopt;
  }
  ++m_reassignments;
  return lease(w, best, m_outstanding.at(best).block, now, true);
}

std::optional<Assignment> Scheduler::assign_early_copy(Worker& w, Seconds now) {
  if (!(w.work_per_second > 0)) return std::nullopt;
  const double horizon = m_policy->speculation_horizon(pool_view(now));
  if (!(horizon < std::numeric_limits<double>::infinity())) return std::nullopt;
  const auto overdue = most_overdue(w.id, now);
  if (!overdue) return std::nullopt;
  const BlockId id = overdue->second;
  const Seconds delay = now - overdue->first;  // expected to end at now + delay
  if (delay <= horizon) return std::nullopt;   // the most overdue one is not late enough
  // Behind what it holds (prefetched blocks: this policy's workers rarely have a free thread
  // while the pool lasts).
  const Seconds finish =
      now + w.rtt + w.held_work / w.work_per_second + m_outstanding.at(id).work / (w.work_per_second / w.threads);
  if (finish >= now + delay) return std::nullopt;
  ++m_reassignments;
  return lease(w, id, m_outstanding.at(id).block, now, true);
}

bool Scheduler::held_by(BlockId id, WorkerId worker) const {
  const auto& attempts = m_outstanding.at(id).attempts;
  return std::any_of(attempts.begin(), attempts.end(), [&](AttemptId a) { return m_leases.at(a).worker == worker; });
}

std::optional<std::pair<Seconds, BlockId>> Scheduler::most_overdue(WorkerId worker, Seconds now) const {
  for (auto it = m_copy_known.begin(); it != m_copy_known.end() && it->first < now; ++it)
    if (!held_by(it->second, worker)) return *it;
  return std::nullopt;
}

}  // namespace farm
