// The farm's scheduling state machine (docs/architecture.md, Core algorithm). It owns the block pool,
// the outstanding leases, per-worker block sizes and waiting times, reassignment and
// dead-worker detection. It does no I/O, reads no clock and starts no thread: the ZeroMQ
// master and the simulator both drive it, passing the time of every event.
//
// Invariant: the pending pool, the outstanding blocks and the completed blocks always
// partition every frame's image exactly (checked by tests on every step).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "scheduler/policy.h"
#include "scheduler/scheduler_types.h"

namespace farm {

// At most this many leases are out to one worker at once (credits beyond it are ignored): two per
// thread and 8 more. A relay (members > 0) gets the 8 for each of its site workers, as they would
// connected directly: its site needs as much in flight to cover the same round trips (with 8 for
// the whole site, a relay of 100 workers 200 ms away starved once blocks were short).
int max_leases_per_worker(int threads, int members = 0);

// Sees every mutating call with its inputs and outputs, after the scheduler acted on it (the
// trace, scheduler_trace.h). Observers must not call back into the scheduler's mutators.
class SchedulerObserver {
 public:
  virtual ~SchedulerObserver() = default;
  virtual void restored(const std::vector<Block>& completed, AttemptId next_attempt) = 0;
  virtual void joined(WorkerId worker, Seconds now, int threads, int members) = 0;
  virtual void left(WorkerId worker, Seconds now) = 0;
  virtual void heard(WorkerId worker, Seconds now) = 0;
  virtual void network(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead) = 0;
  virtual void requested(WorkerId worker, Seconds now, int credits, const std::vector<Assignment>& out) = 0;
  virtual void released(WorkerId worker, AttemptId attempt) = 0;
  virtual void resulted(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds,
                        const ResultReply& reply) = 0;
  virtual void ticked(Seconds now, const std::vector<WorkerId>& dead) = 0;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerConfig config);
  // At most one observer (null: none); it must outlive the scheduler's use of it.
  void set_observer(SchedulerObserver* observer) { m_observer = observer; }

  // Resuming a job: `completed` were committed by an earlier run (the master's journal) and
  // leave the pool; attempt ids continue from `next_attempt` so that no lease of this run can
  // be mistaken for one of the earlier run's. Only before any worker joined. Throws
  // std::invalid_argument if a block leaves the image, overlaps another or is not pending.
  void restore(const std::vector<Block>& completed, AttemptId next_attempt);

  // A worker said hello. `threads` is how many blocks it renders at once; `members` > 0 for a
  // relay, the workers of its site that share those threads (each has its own round trip to
  // cover). A repeated hello replaces both.
  void worker_joined(WorkerId worker, Seconds now, int threads, int members = 0);
  // A worker left cleanly or its connection broke: its blocks go back to the front of the pool.
  void worker_left(WorkerId worker, Seconds now);
  // Any message from the worker: it is alive.
  void heard_from(WorkerId worker, Seconds now);
  // Measured round trip and throughput of the worker's link (bytes_per_second <= 0: unknown),
  // and what a lease costs besides rendering, queueing, the round trip and the transfer (the
  // worker's own per-block work, the master's delay; < 0: unknown; control/link_estimate.h).
  void network_sample(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead = -1);

  // The worker asks for up to `credits` blocks. Demand-driven: nothing is ever pushed.
  std::vector<Assignment> request(WorkerId worker, Seconds now, int credits);
  // The lease could not be delivered or its result was invalid: forget it; the block goes
  // back to the front of the pool unless another copy is out.
  void release(WorkerId worker, AttemptId attempt);
  // The worker delivered the pixels of `attempt`, rendered in `render_seconds` on one of its
  // threads as it reports (< 0: not known; used for a relay's speed).
  ResultReply result(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds = -1);
  // Advances time: halves sizes of workers past their waiting time, declares silent workers
  // dead (their blocks go back to the pool). Returns the workers declared dead.
  std::vector<WorkerId> tick(Seconds now);
  // The earliest time at which tick() would do something (infinity if never).
  Seconds next_deadline() const;

  bool done() const { return m_pool.empty() && m_outstanding.empty(); }

  // Introspection for statistics, progress and tests.
  const SchedulerConfig& config() const { return m_config; }
  const Policy& policy() const { return *m_policy; }
  const std::vector<PolicyDecision>& decisions() const { return m_decisions; }
  bool has_worker(WorkerId worker) const { return m_workers.count(worker) != 0; }
  int block_size_of(WorkerId worker) const;
  Seconds wait_of(WorkerId worker) const;
  Seconds lease_overhead_of(WorkerId worker) const;
  // Its measured speed over all its threads, in block_cost's unit per second (0: not yet).
  double work_per_second_of(WorkerId worker) const;
  size_t live_workers() const { return m_workers.size(); }
  size_t pending_blocks() const { return m_pool.size(); }
  size_t outstanding_blocks() const { return m_outstanding.size(); }
  uint64_t completed_blocks() const { return m_completed_blocks; }
  uint64_t restored_blocks() const { return m_restored_blocks; }
  int64_t total_pixels() const { return m_total_pixels; }
  int64_t completed_pixels() const { return m_completed_pixels; }
  int64_t pending_pixels() const { return m_pending_pixels; }
  double pending_work() const { return m_pending_work; }
  double outstanding_work() const { return m_outstanding_work; }
  uint64_t late_results() const { return m_late_results; }
  uint64_t reassignments() const { return m_reassignments; }
  std::vector<Block> pending() const { return {m_pool.begin(), m_pool.end()}; }
  std::vector<Block> outstanding() const;
  // Attempts currently leased to a worker.
  std::vector<AttemptId> attempts_of(WorkerId worker) const;
  // The one authority on leases: whether `attempt` is a lease this run gave `worker` (settled or
  // not: a late result of a settled lease is the scheduler's to drop as late, not a stranger's)
  // for `rect`.
  LeaseCheck check_lease(WorkerId worker, AttemptId attempt, const Block& rect) const;
  // `attempt` is an outstanding lease of `worker`.
  bool holds(WorkerId worker, AttemptId attempt) const;

  // Seed 002's supervisor, between relays (scheduler_sites.cpp). Once the pool is empty, relay
  // `dry` has run dry when it holds nothing unstarted (trigger "site empty"), or, with
  // `below_fraction` > 0, when its unstarted work lasts less than that fraction of the time the
  // whole job has left (trigger "below a fraction of its ideal holding"). The plan names the
  // relay with the most unstarted time and its newest leases (the ones it most likely has not
  // started) worth about what evens the two sites out; empty when nothing is worth moving.
  // `queued`: how many leases each relay last said wait unstarted in its queue (its newest); a
  // relay not in it is taken to be rendering its oldest `threads`. `in_flight`: leases already
  // recalled.
  struct RecallPlan {
    WorkerId from = 0;
    std::vector<AttemptId> attempts;
    bool site_empty = false;  // which trigger fired
  };
  RecallPlan plan_recall(WorkerId dry, double below_fraction, const std::map<WorkerId, int>& queued,
                         const std::set<AttemptId>& in_flight) const;

 private:
  struct Lease {
    WorkerId worker;
    BlockId block_id;
    Seconds assigned_at;
    double work_ahead = 0;  // work the worker held when this lease was added (its queue)
  };
  struct Outstanding {
    Block block;
    std::vector<AttemptId> attempts;
    int copy_index = 0;      // 0: not a copy candidate, 1: in m_copy_known, 2: in m_copy_unknown
    Seconds copy_key = 0;    // its key there: expected finish, or first assignment time
    double work = 0;         // its predicted work (work_of)
  };
  // Copy candidates (1 <= holders < max_copies), ordered so that assign_copy() finds the one
  // expected to finish last without scanning every outstanding block (the simulator drains
  // 20,000 blocks into 10,000 idle workers). Known: by the first holder's expected finish,
  // largest last, ties to the smaller id; unknown speed: by first assignment, oldest first.
  struct LaterFinishLast {
    bool operator()(const std::pair<Seconds, BlockId>& a, const std::pair<Seconds, BlockId>& b) const {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    }
  };
  std::set<std::pair<Seconds, BlockId>, LaterFinishLast> m_copy_known;
  std::set<std::pair<Seconds, BlockId>> m_copy_unknown;
  void index_copy_candidate(BlockId id);
  struct Worker {
    WorkerId id = 0;
    int threads = 1;
    int members = 0;  // > 0 for a relay: its site's workers
    int block_size = 0;
    Seconds last_seen = 0;
    Seconds rtt = 0;
    double bytes_per_second = 0;
    Seconds lease_overhead = 0;
    Seconds progress_since = 0;   // last result, or first lease after being idle
    int timeouts_since_progress = 0;
    int fast_results_in_row = 0;
    double work_per_second = 0;   // smoothed render speed, 0 = unknown
    // Decaying sums of its results' work and time: work_per_second is their ratio, so each
    // block counts in proportion to its time. (A per-block average let one short block whose
    // cost the model over-predicted 30x make a worker look 10x faster.)
    double recent_work = 0, recent_seconds = 0;
    double held_work = 0;         // of its leases
    std::vector<AttemptId> leases;
    Seconds indexed_deadline = 0;  // its key in m_deadlines
  };

  void do_restore(const std::vector<Block>& completed, AttemptId next_attempt);
  void do_worker_joined(WorkerId worker, Seconds now, int threads, int members);
  void do_worker_left(WorkerId worker);
  void do_heard_from(WorkerId worker, Seconds now);
  void do_network_sample(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead);
  std::vector<Assignment> do_request(WorkerId worker, Seconds now, int credits);
  void do_release(WorkerId worker, AttemptId attempt);
  ResultReply do_result(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds);
  std::vector<WorkerId> do_tick(Seconds now);

  WorkerView view_of(const Worker& w) const;
  PoolView pool_view(Seconds now) const;
  Seconds wait_for(const Worker& w) const;
  std::optional<Assignment> assign_from_pool(Worker& w, Seconds now);
  std::optional<Assignment> assign_copy(Worker& w, Seconds now);
  // Before the pool drains (Policy::speculation_horizon): a copy of the most overdue block, if
  // it is now expected to end after the job should and this worker would finish it sooner.
  std::optional<Assignment> assign_early_copy(Worker& w, Seconds now);
  bool held_by(BlockId id, WorkerId worker) const;
  // The copy candidate with the earliest expected finish before `now` not held by `worker`:
  // (its expected finish, its id).
  std::optional<std::pair<Seconds, BlockId>> most_overdue(WorkerId worker, Seconds now) const;
  Assignment lease(Worker& w, BlockId id, const Block& block, Seconds now, bool is_copy);
  void drop_lease(AttemptId attempt);
  void remove_worker(WorkerId worker);
  bool apply(Worker& w, const std::optional<SizeChange>& change, Seconds now);
  // Speed measurement (scheduler_speed.cpp). Every change of a worker's speed or thread count
  // goes through forget_speed and count_speed (m_known_*).
  void forget_speed(const Worker& w);
  void count_speed(const Worker& w);
  // Folds in a result of `work` that took `took` since its lease (or the worker's last progress),
  // or, for a relay, `render_seconds` as its site worker reported; true if the speed changed.
  bool measure_speed(Worker& w, double work, Seconds took, Seconds render_seconds);
  // A relay whose site went from `old_threads` to w.threads keeps its per-thread speed.
  void rescale_speed(Worker& w, int old_threads);
  // Stable: by predicted work, descending (Policy::costliest_first).
  void order_costliest_first(std::vector<Block>& blocks) const;
  double work_of(const Block& b) const {
    return m_config.block_cost ? m_config.block_cost(b) : static_cast<double>(b.pixels());
  }
  int total_threads() const { return m_total_threads; }
  Seconds deadline_of(const Worker& w) const;
  // Re-files the worker under its current deadline. Every public entry point that changes
  // a worker calls it, so tick() and next_deadline() need not scan every worker (the
  // simulator drives 10,000 of them). A key earlier than the truth is harmless (tick()
  // re-evaluates the worker); a later one would delay a decision, hence the discipline.
  void reindex(Worker& w);

  SchedulerConfig m_config;
  SchedulerObserver* m_observer = nullptr;
  std::unique_ptr<Policy> m_policy;
  std::deque<Block> m_pool;
  std::map<BlockId, Outstanding> m_outstanding;
  std::map<AttemptId, Lease> m_leases;  // outstanding
  struct Given {
    WorkerId worker;
    Block block;
  };
  std::map<AttemptId, Given> m_given;  // every lease of this run, for check_lease
  std::map<WorkerId, Worker> m_workers;
  std::vector<PolicyDecision> m_decisions;
  std::set<std::pair<Seconds, WorkerId>> m_deadlines;
  int m_total_threads = 0;

  BlockId m_next_block_id = 1;
  AttemptId m_next_attempt = 1;
  uint64_t m_completed_blocks = 0;
  uint64_t m_restored_blocks = 0;
  int64_t m_total_pixels = 0;
  int64_t m_completed_pixels = 0;
  int64_t m_pending_pixels = 0;
  double m_pending_work = 0, m_outstanding_work = 0;
  Seconds m_first_join = -1;  // when the first worker joined (-1: none yet)
  double m_known_speed = 0;  // summed work_per_second of workers with one
  int m_known_threads = 0;   // their threads
  std::multiset<double> m_thread_speeds;  // per-thread speed of each worker with one
  uint64_t m_late_results = 0;
  uint64_t m_reassignments = 0;
};

}  // namespace farm
