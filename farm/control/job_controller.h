// The socket-free heart of a job: the scheduler, the run statistics, the link estimates and the
// trace, driven by events. The ZeroMQ master and the simulator both call it for every message
// and every tick, so the sequence of scheduler calls for an event is written once (the "same
// decisions" property holds by construction). It does no I/O but the optional trace, reads no
// clock: time is always an argument. What to send is returned; the driver delivers it.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "control/renderer_failures.h"
#include "control/run_stats.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_trace.h"

namespace farm {

// What a worker reported with a result's pixels.
struct ResultReport {
  double render_seconds = 0;
  double queued_seconds = 0;
  uint64_t wire_bytes = 0;  // payload as it crossed the link (compressed or not)
  uint64_t rays = 0;
  double fixed_seconds = 0;  // of render_seconds, the renderer's cost of any block (the worker's measure)
};

class JobController {
 public:
  // `trace` (optional) receives every scheduler call (scheduler/scheduler_trace.h).
  JobController(SchedulerConfig config, std::ostream* trace);

  // `site_workers` > 0 for a relay (farm relay): the workers of its site.
  void join(WorkerId worker, const std::string& name, int threads, Seconds now, int site_workers = 0);
  // A relay's site changed (workers came or went): it said hello again with the new counts.
  void resize(WorkerId worker, int threads, int site_workers, Seconds now);
  // Left cleanly or gave up (died = false), or cut off by the driver (died = true): its
  // outstanding blocks go back to the pool.
  void leave(WorkerId worker, Seconds now, bool died);
  // Any message from a joined worker.
  void heard(WorkerId worker, Seconds now);
  // A measured round trip (ping/pong) for the worker's link.
  void round_trip(WorkerId worker, Seconds rtt);

  // Blocks for the worker; the driver sends each and calls undeliverable() for those it cannot.
  std::vector<Assignment> request(WorkerId worker, Seconds now, int credits);
  void undeliverable(WorkerId worker, AttemptId attempt);
  // A relay gave back `attempt` unstarted (seed 002's supervisor): the block returns to the
  // pool. False if it is not an outstanding lease of that relay.
  bool recalled(WorkerId worker, AttemptId attempt);

  // The scheduler's answer (Scheduler::check_lease: it is the one authority on leases).
  LeaseCheck check_lease(WorkerId worker, AttemptId attempt, const Block& rect) const {
    return m_scheduler.check_lease(worker, attempt, rect);
  }
  // The result of a lease of the worker's own could not be used (encoding, corrupt payload):
  // the block goes back to the pool.
  void reject(WorkerId worker, AttemptId attempt);
  // The worker's renderer could not render its lease `attempt` of `block`: the block goes back to
  // the pool (unless another copy is being rendered), and the failure counts (renderer_failures.h:
  // the block's, and, unless `may_bench` is false as for a relay, the worker's in a row).
  FailureCount block_failed(WorkerId worker, AttemptId attempt, const Block& block, bool may_bench);
  // A usable result. Accepted: the driver commits reply.block and tells reply.cancels to stop
  // (their leases are already recorded as cancelled). Late: nothing to do.
  ResultReply result(WorkerId worker, AttemptId attempt, Seconds now, const ResultReport& report);

  // Advances time (halvings, dead workers). Returns the workers declared dead.
  std::vector<WorkerId> tick(Seconds now);

  const Scheduler& scheduler() const { return m_scheduler; }
  Scheduler& scheduler() { return m_scheduler; }  // restore() when resuming
  const RunStats& stats() const { return m_stats; }
  void bytes_out(WorkerId worker, uint64_t bytes) { m_stats.bytes_out(worker, bytes); }
  Seconds rtt_of(WorkerId worker) const;
  double bandwidth_of(WorkerId worker) const;  // bytes/s of its result transfers, 0 = unknown

 private:
  struct LinkEstimate {
    Seconds rtt = 0;
    double bandwidth = 0;  // smoothed bytes/s of result transfers, 0 = unknown
    Seconds overhead = -1;  // smoothed lease time besides render, queue, round trip and transfer, < 0 = unknown
    Seconds renderer = -1;  // smoothed fixed_seconds of its results (a process start per block), < 0 = unknown
  };
  std::shared_ptr<RecordedCosts> m_costs;  // the cost model's answers, for the trace (before m_scheduler)
  Scheduler m_scheduler;
  std::unique_ptr<SchedulerTrace> m_trace;
  RunStats m_stats;
  std::map<WorkerId, LinkEstimate> m_links;
  RendererFailures m_failures;
};

}  // namespace farm
