#include "control/run_stats.h"

#include <cstdio>
#include <sstream>

#include "base/json_text.h"

namespace farm {

const char* lease_outcome_name(LeaseOutcome outcome) {
  switch (outcome) {
    case LeaseOutcome::outstanding: return "outstanding";
    case LeaseOutcome::accepted: return "accepted";
    case LeaseOutcome::late: return "late";
    case LeaseOutcome::cancelled: return "cancelled";
    case LeaseOutcome::lost: return "lost";
    case LeaseOutcome::recalled: return "recalled";
  }
  return "?";
}


void RunStats::joined(WorkerId id, const std::string& name, int threads, double now, int site_workers) {
  WorkerRecord& w = m_workers[id];
  w.id = id;
  w.name = name;
  w.threads = threads;
  w.site_workers = site_workers;
  w.joined = now;
}

void RunStats::resized(WorkerId id, int threads, int site_workers) {
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return;
  it->second.threads = threads;
  it->second.site_workers = site_workers;
}

void RunStats::left(WorkerId id, double now, bool died) {
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return;
  it->second.left = now;
  it->second.died = died;
  for (auto& [attempt, l] : m_leases)
    if (l.worker == id && l.outcome == LeaseOutcome::outstanding) l.outcome = LeaseOutcome::lost;
}

void RunStats::assigned(const Assignment& a, double now) {
  LeaseRecord& l = m_leases[a.attempt];
  l.block = a.block;
  l.worker = a.worker;
  l.attempt = a.attempt;
  l.is_copy = a.is_copy;
  l.assigned = now;
}

void RunStats::result(WorkerId worker, AttemptId attempt, double now, double render_seconds, double queued_seconds,
                      uint64_t bytes, uint64_t rays, bool accepted) {
  WorkerRecord& w = m_workers[worker];
  w.bytes_in += bytes;
  w.busy_seconds += render_seconds;
  auto it = m_leases.find(attempt);
  if (it != m_leases.end() && it->second.worker == worker && it->second.outcome != LeaseOutcome::accepted) {
    LeaseRecord& l = it->second;
    l.received = now;
    l.render_seconds = render_seconds;
    l.queued_seconds = queued_seconds;
    l.bytes = bytes;
    l.rays = rays;
    l.outcome = accepted ? LeaseOutcome::accepted : LeaseOutcome::late;
    if (accepted) {
      ++w.blocks;
      w.pixels += static_cast<uint64_t>(l.block.pixels());
      w.rays += rays;
      m_rays += rays;
    }
  }
}

void RunStats::cancelled(AttemptId attempt) {
  auto it = m_leases.find(attempt);
  if (it != m_leases.end() && it->second.outcome == LeaseOutcome::outstanding) it->second.outcome = LeaseOutcome::cancelled;
}

void RunStats::recalled(AttemptId attempt) {
  auto it = m_leases.find(attempt);
  if (it != m_leases.end() && it->second.outcome == LeaseOutcome::outstanding) it->second.outcome = LeaseOutcome::recalled;
}

void RunStats::bytes_out(WorkerId id, uint64_t bytes) { m_workers[id].bytes_out += bytes; }

std::string RunStats::json(const Scheduler& s, double makespan, const std::vector<std::string>& summary) const {
  std::ostringstream o;
  o << "{\n  \"makespan_seconds\": " << fixed(makespan) << ",\n";
  for (const std::string& line : summary) o << "  " << line << ",\n";
  o << "  \"policy\": " << json_string(s.policy().name()) << ",\n"
    << "  \"block_size\": " << s.config().block_size << ",\n"
    << "  \"min_block\": " << s.config().min_block << ",\n"
    << "  \"base_wait_seconds\": " << fixed(s.config().base_wait) << ",\n"
    << "  \"max_copies\": " << s.config().max_copies << ",\n"
    << "  \"blocks_completed\": " << s.completed_blocks() << ",\n"
    << "  \"reassignments\": " << s.reassignments() << ",\n"
    << "  \"late_results\": " << s.late_results() << ",\n"
    << "  \"rays\": " << m_rays << ",\n";
  o << "  \"workers\": [";
  bool first = true;
  for (const auto& [id, w] : m_workers) {
    double alive = (w.left >= 0 ? w.left : makespan) - w.joined;
    double idle = std::max(0.0, alive * w.threads - w.busy_seconds);
    o << (first ? "\n" : ",\n") << "    {\"id\": " << id << ", \"name\": " << json_string(w.name) << ", \"threads\": " << w.threads
      << ", \"site_workers\": " << w.site_workers << ", \"joined\": " << fixed(w.joined) << ", \"left\": " << fixed(w.left) << ", \"died\": " << (w.died ? "true" : "false")
      << ", \"blocks\": " << w.blocks << ", \"pixels\": " << w.pixels << ", \"rays\": " << w.rays
      << ", \"busy_seconds\": " << fixed(w.busy_seconds) << ", \"idle_seconds\": " << fixed(idle)
      << ", \"bytes_in\": " << w.bytes_in << ", \"bytes_out\": " << w.bytes_out << "}";
    first = false;
  }
  o << "\n  ],\n  \"decisions\": [";
  first = true;
  for (const PolicyDecision& d : s.decisions()) {
    o << (first ? "\n" : ",\n") << "    {\"time\": " << fixed(d.time) << ", \"worker\": " << d.worker
      << ", \"from\": " << d.from_size << ", \"to\": " << d.to_size << ", \"reason\": " << json_string(d.reason) << "}";
    first = false;
  }
  o << "\n  ],\n  \"blocks\": [";
  first = true;
  for (const auto& [attempt, l] : m_leases) {
    // The worker's clock is not ours: its start/finish are estimated back from the receipt.
    double finish = l.received;
    double start = l.received >= 0 ? l.received - l.render_seconds : -1;
    o << (first ? "\n" : ",\n") << "    {\"frame\": " << l.block.frame << ", \"x\": " << l.block.x << ", \"y\": " << l.block.y
      << ", \"width\": " << l.block.width << ", \"height\": " << l.block.height << ", \"size\": " << l.block.size()
      << ", \"worker\": " << l.worker << ", \"attempt\": " << attempt << ", \"copy\": " << (l.is_copy ? "true" : "false")
      << ", \"assigned\": " << fixed(l.assigned) << ", \"start\": " << fixed(start) << ", \"finish\": " << fixed(finish)
      << ", \"received\": " << fixed(l.received) << ", \"render_seconds\": " << fixed(l.render_seconds)
      << ", \"queued_seconds\": " << fixed(l.queued_seconds) << ", \"bytes\": " << l.bytes << ", \"rays\": " << l.rays
      << ", \"outcome\": " << json_string(lease_outcome_name(l.outcome)) << "}";
    first = false;
  }
  o << "\n  ]\n}\n";
  return o.str();
}

}  // namespace farm
