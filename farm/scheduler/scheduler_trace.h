// Recording and replaying the scheduler's inputs and outputs. Both drivers (the ZeroMQ master
// and the simulator) can write a trace of every call they make, with its time and what came
// back; replay_trace() feeds the same calls to a fresh Scheduler and checks that every output
// and policy decision is the same. That is the test that the master and the simulator make the
// same decisions for the same sequence of events (and that the scheduler has no hidden input:
// no clock, no randomness, no iteration-order dependence).
#pragma once

#include <iosfwd>
#include <string>

#include "scheduler/scheduler.h"

namespace farm {

// A Scheduler whose mutating calls are also written to `trace` (when not null), one line each:
// "<op> <inputs> : <outputs> ; <new policy decisions>". Reading calls are inherited unchanged.
class TracedScheduler : public Scheduler {
 public:
  TracedScheduler(SchedulerConfig config, std::ostream* trace);

  void restore(const std::vector<Block>& completed, AttemptId next_attempt);
  void worker_joined(WorkerId worker, Seconds now, int threads);
  void worker_left(WorkerId worker, Seconds now);
  void heard_from(WorkerId worker, Seconds now);
  void network_sample(WorkerId worker, Seconds rtt, double bytes_per_second);
  std::vector<Assignment> request(WorkerId worker, Seconds now, int credits);
  void release(WorkerId worker, AttemptId attempt);
  ResultReply result(WorkerId worker, AttemptId attempt, Seconds now);
  std::vector<WorkerId> tick(Seconds now);

 private:
  void write(const std::string& inputs, const std::string& outputs);
  std::ostream* m_trace;
  size_t m_decisions_written = 0;
};

// Replays a trace written by TracedScheduler. Returns "" when every call gave the recorded
// outputs, otherwise "line N: expected ..., got ..." for the first difference (or a parse error).
std::string replay_trace(std::istream& trace);

}  // namespace farm
