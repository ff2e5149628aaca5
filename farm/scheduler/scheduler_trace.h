// Recording and replaying the scheduler's inputs and outputs. Both drivers (the ZeroMQ master
// and the simulator) can write a trace of every call they make, with its time and what came
// back; replay_trace() feeds the same calls to a fresh Scheduler and checks that every output
// and policy decision is the same. That is the test that the master and the simulator make the
// same decisions for the same sequence of events (and that the scheduler has no hidden input:
// no clock, no randomness, no iteration-order dependence).
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "scheduler/scheduler.h"

namespace farm {

// A block cost model (SchedulerConfig::block_cost) whose answers a trace keeps, so that a run
// that predicts costs (factoring with the master's preview) replays too. Wrap the configuration
// before the Scheduler is made (its constructor asks for every tile's cost) and give the result
// to SchedulerTrace: each block's cost is written once, as a "K frame x y w h cost" line ahead of
// the call that first asked for it, and replay_trace answers from those lines.
class RecordedCosts {
 public:
  // Wraps config.block_cost, if it has one (nullptr otherwise).
  static std::shared_ptr<RecordedCosts> wrap(SchedulerConfig& config);
  // The "K" lines of the costs asked for since the last call, each ending in a newline.
  std::string take_lines();

 private:
  using Key = std::tuple<int, int, int, int, int>;
  double cost(const Block& b);
  std::function<double(const Block&)> m_model;
  std::map<Key, double> m_known;
  std::vector<std::pair<Block, double>> m_unwritten;
};

// Writes every mutating call of one scheduler to `trace`, one line each:
// "<op> <inputs> : <outputs> ; <new policy decisions>". It observes the scheduler (set_observer),
// so a call through any reference to it is recorded; it detaches itself when destroyed.
class SchedulerTrace : public SchedulerObserver {
 public:
  // Writes the configuration line at once (and the costs the constructor asked for: `costs` is
  // what RecordedCosts::wrap made of the scheduler's configuration, if it has a cost model).
  SchedulerTrace(Scheduler& scheduler, std::ostream& trace, std::shared_ptr<RecordedCosts> costs = nullptr);
  ~SchedulerTrace() override;
  SchedulerTrace(const SchedulerTrace&) = delete;
  SchedulerTrace& operator=(const SchedulerTrace&) = delete;

  void restored(const std::vector<Block>& completed, AttemptId next_attempt) override;
  void joined(WorkerId worker, Seconds now, int threads, int members) override;
  void left(WorkerId worker, Seconds now) override;
  void heard(WorkerId worker, Seconds now) override;
  void network(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead) override;
  void requested(WorkerId worker, Seconds now, int credits, const std::vector<Assignment>& out) override;
  void released(WorkerId worker, AttemptId attempt) override;
  void resulted(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds,
                const ResultReply& reply) override;
  void ticked(Seconds now, const std::vector<WorkerId>& dead) override;

 private:
  void write(const std::string& inputs, const std::string& outputs);
  Scheduler& m_scheduler;
  std::ostream& m_trace;
  std::shared_ptr<RecordedCosts> m_costs;
  size_t m_decisions_written = 0;
};

// Replays a trace written by SchedulerTrace. Ok when every call gave the recorded outputs,
// otherwise "line N: recorded ..., replay gave ..." for the first difference (or a parse error).
Status replay_trace(std::istream& trace);

}  // namespace farm
