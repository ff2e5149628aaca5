// The scheduler's read-only answers about one worker or one lease (scheduler.h): what a driver,
// a policy's statistics or the live view ask between events. The state machine is in
// scheduler.cpp.
#include "scheduler/scheduler.h"

namespace farm {

int Scheduler::block_size_of(WorkerId id) const {
  auto it = m_workers.find(id);
  return it == m_workers.end() ? 0 : it->second.block_size;
}

double Scheduler::work_per_second_of(WorkerId id) const {
  auto it = m_workers.find(id);
  return it == m_workers.end() ? 0 : it->second.work_per_second;
}

Seconds Scheduler::lease_overhead_of(WorkerId id) const {
  auto it = m_workers.find(id);
  return it == m_workers.end() ? 0 : it->second.lease_overhead;
}

Seconds Scheduler::wait_of(WorkerId id) const {
  auto it = m_workers.find(id);
  return it == m_workers.end() ? 0 : wait_for(it->second);
}

LeaseCheck Scheduler::check_lease(WorkerId worker, AttemptId attempt, const Block& rect) const {
  auto given = m_given.find(attempt);
  if (given == m_given.end() || given->second.worker != worker) return LeaseCheck::unknown_lease;
  if (!(given->second.block == rect)) return LeaseCheck::wrong_rectangle;
  return LeaseCheck::ok;
}

bool Scheduler::holds(WorkerId worker, AttemptId attempt) const {
  auto lease = m_leases.find(attempt);
  return lease != m_leases.end() && lease->second.worker == worker;
}

std::vector<Block> Scheduler::outstanding() const {
  std::vector<Block> out;
  for (const auto& [id, o] : m_outstanding) out.push_back(o.block);
  return out;
}

std::vector<AttemptId> Scheduler::attempts_of(WorkerId id) const {
  auto it = m_workers.find(id);
  return it == m_workers.end() ? std::vector<AttemptId>{} : it->second.leases;
}

}  // namespace farm
