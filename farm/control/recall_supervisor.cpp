#include "control/recall_supervisor.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace farm {

void RecallSupervisor::forget_recall_from(WorkerId relay) {
  for (auto r = m_recalling.begin(); r != m_recalling.end();) r = r->second == relay ? m_recalling.erase(r) : std::next(r);
  m_recall_for.erase(relay);
  m_sent_at.erase(relay);
}

void RecallSupervisor::relay_gone(WorkerId relay) {
  m_relays.erase(relay);
  forget_recall_from(relay);
  for (auto r = m_recall_for.begin(); r != m_recall_for.end();) r = r->second == relay ? m_recall_for.erase(r) : std::next(r);
}

void RecallSupervisor::expire(double now) {
  std::vector<WorkerId> late;
  for (const auto& [relay, at] : m_sent_at)
    if (now - at >= m_expiry) late.push_back(relay);
  for (WorkerId relay : late) forget_recall_from(relay);
}

bool RecallSupervisor::holds_request(const Scheduler& scheduler, WorkerId relay, int credits, int queued, double now,
                                     std::optional<RecallOrder>& send) {
  send.reset();
  auto self = m_relays.find(relay);
  if (self == m_relays.end()) return false;
  self->second.queued = queued;
  self->second.wanting = 0;
  if (!m_enabled || scheduler.pending_blocks() != 0) return false;
  expire(now);
  bool waiting = false;  // one recall at a time for a relay: wait for its answer
  for (const auto& [victim, for_whom] : m_recall_for) waiting |= for_whom == relay;
  if (!waiting) {
    std::set<AttemptId> in_flight;
    for (const auto& [attempt, victim] : m_recalling) in_flight.insert(attempt);
    std::map<WorkerId, int> said;
    for (const auto& [id, r] : m_relays) said[id] = r.queued;
    Scheduler::RecallPlan plan = scheduler.plan_recall(relay, m_below, said, in_flight);
    // Nothing worth moving, or that relay has not answered the last one: served as usual.
    if (plan.attempts.empty() || m_recall_for.count(plan.from)) return false;
    for (const AttemptId a : plan.attempts) m_recalling[a] = plan.from;
    m_recall_for[plan.from] = relay;
    m_sent_at[plan.from] = now;
    ++m_recalls;
    send = RecallOrder{plan.from, relay, std::move(plan.attempts), plan.site_empty};
  }
  self->second.wanting = credits;
  return true;
}

void RecallSupervisor::unsent(const RecallOrder& order) {
  forget_recall_from(order.from);
  --m_recalls;
  if (auto dry = m_relays.find(order.dry); dry != m_relays.end()) dry->second.wanting = 0;
}

RecallAnswer RecallSupervisor::released(JobController& job, WorkerId from, const std::vector<AttemptId>& back) {
  RecallAnswer answer;
  // Everything this relay was asked for is answered now, given back or not.
  size_t asked = 0;
  for (auto it = m_recalling.begin(); it != m_recalling.end();) {
    if (it->second != from) {
      ++it;
      continue;
    }
    ++asked;
    it = m_recalling.erase(it);
  }
  for (const AttemptId a : back) answer.given += job.recalled(from, a) ? 1 : 0;
  m_recalled_blocks += answer.given;
  if (auto self = m_relays.find(from); self != m_relays.end()) {
    // What it said was queued is less now; if it kept some it had started them: none is left.
    int& q = self->second.queued;
    q = answer.given < asked ? 0 : std::max(0, q - static_cast<int>(answer.given));
  }
  m_sent_at.erase(from);
  auto waiting = m_recall_for.find(from);
  if (waiting == m_recall_for.end()) return answer;
  answer.recalled = true;
  const WorkerId dry = waiting->second;
  m_recall_for.erase(waiting);
  auto d = m_relays.find(dry);
  if (d != m_relays.end() && d->second.wanting > 0) answer.serve = std::make_pair(dry, RelayAsk{d->second.wanting, d->second.queued});
  return answer;
}

}  // namespace farm
