#include "control/job_controller.h"

#include "control/link_estimate.h"

namespace farm {

JobController::JobController(SchedulerConfig config, std::ostream* trace)
    : m_costs(trace ? RecordedCosts::wrap(config) : nullptr), m_scheduler(config) {
  if (trace) m_trace = std::make_unique<SchedulerTrace>(m_scheduler, *trace, m_costs);
}

void JobController::join(WorkerId worker, const std::string& name, int threads, Seconds now, int site_workers) {
  m_scheduler.worker_joined(worker, now, threads, site_workers);
  m_stats.joined(worker, name, threads, now, site_workers);
  m_links[worker] = LinkEstimate{};
}

void JobController::resize(WorkerId worker, int threads, int site_workers, Seconds now) {
  m_scheduler.worker_joined(worker, now, threads, site_workers);
  m_stats.resized(worker, threads, site_workers);
}

void JobController::leave(WorkerId worker, Seconds now, bool died) {
  m_scheduler.worker_left(worker, now);
  m_stats.left(worker, now, died);
  m_links.erase(worker);
  m_failures.forget(worker);
}

void JobController::heard(WorkerId worker, Seconds now) { m_scheduler.heard_from(worker, now); }

void JobController::round_trip(WorkerId worker, Seconds rtt) {
  auto it = m_links.find(worker);
  if (it == m_links.end()) return;
  it->second.rtt = rtt;
  m_scheduler.network_sample(worker, rtt, it->second.bandwidth);
}

Seconds JobController::rtt_of(WorkerId worker) const {
  auto it = m_links.find(worker);
  return it == m_links.end() ? 0 : it->second.rtt;
}

double JobController::bandwidth_of(WorkerId worker) const {
  auto it = m_links.find(worker);
  return it == m_links.end() ? 0 : it->second.bandwidth;
}

std::vector<Assignment> JobController::request(WorkerId worker, Seconds now, int credits) {
  std::vector<Assignment> out = m_scheduler.request(worker, now, credits);
  for (const Assignment& a : out) m_stats.assigned(a, now);
  return out;
}

// An undeliverable lease must not pin its block.
void JobController::undeliverable(WorkerId worker, AttemptId attempt) { reject(worker, attempt); }

bool JobController::recalled(WorkerId worker, AttemptId attempt) {
  if (!m_scheduler.holds(worker, attempt)) return false;
  m_scheduler.release(worker, attempt);
  m_stats.recalled(attempt);
  return true;
}

void JobController::reject(WorkerId worker, AttemptId attempt) {
  m_scheduler.release(worker, attempt);
  m_stats.cancelled(attempt);
}

FailureCount JobController::block_failed(WorkerId worker, AttemptId attempt, const Block& block, bool may_bench) {
  reject(worker, attempt);
  return m_failures.failed(worker, block, may_bench);
}

ResultReply JobController::result(WorkerId worker, AttemptId attempt, Seconds now, const ResultReport& report) {
  m_failures.succeeded(worker);  // its renderer works
  // Link estimate from this transfer: what the round trip leaves after render and queueing.
  auto lease = m_stats.leases().find(attempt);
  auto link = m_links.find(worker);
  if (lease != m_stats.leases().end() && link != m_links.end()) {
    LinkEstimate& l = link->second;
    const double bandwidth = update_bandwidth_estimate(l.bandwidth, lease->second.assigned, now, report.render_seconds,
                                                       report.queued_seconds, l.rtt, report.wire_bytes);
    const Seconds overhead = update_overhead_estimate(l.overhead, lease->second.assigned, now, report.render_seconds,
                                                      report.queued_seconds, l.rtt, report.wire_bytes, bandwidth);
    const Seconds renderer = update_renderer_overhead(l.renderer, report.render_seconds, report.fixed_seconds);
    if (bandwidth != l.bandwidth || overhead != l.overhead || renderer != l.renderer) {
      l.bandwidth = bandwidth;
      l.overhead = overhead;
      l.renderer = renderer;
      // A lease costs the link's overhead and the renderer's start-up alike: both are paid per block.
      const Seconds per_lease = overhead < 0 && renderer < 0 ? -1 : std::max(0.0, overhead) + std::max(0.0, renderer);
      m_scheduler.network_sample(worker, l.rtt, l.bandwidth, per_lease);
    }
  }
  ResultReply reply = m_scheduler.result(worker, attempt, now, report.render_seconds);
  const bool accepted = reply.outcome == ResultOutcome::accepted;
  m_stats.result(worker, attempt, now, report.render_seconds, report.queued_seconds, report.wire_bytes, report.rays,
                 accepted);
  if (accepted)
    for (const Cancel& c : reply.cancels) m_stats.cancelled(c.attempt);
  return reply;
}

std::vector<WorkerId> JobController::tick(Seconds now) {
  std::vector<WorkerId> dead = m_scheduler.tick(now);
  for (WorkerId id : dead) {
    m_stats.left(id, now, true);
    m_links.erase(id);
  }
  return dead;
}

}  // namespace farm
