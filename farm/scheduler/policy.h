// Block-size policies: small strategy objects consulted by the scheduler.
//   fixed    - every block is S0; no halving (steps 1-3, 6-7 of docs/architecture.md, Core algorithm).
//   seed     - the paper's rule: halve a worker's size each time it exceeds its waiting time.
//   adaptive - seed, plus: (a) tail shrink: once little work is left, cap the size so that
//              at least two blocks per render thread remain (guided self-scheduling); (b)
//              recovery: a worker that delivers within half its waiting time twice in a row
//              grows back by doubling, never above S0.
//   factoring - adaptive weighted factoring (Hummel et al.; Banicescu's AWF): every block is sized
//              to take about (remaining work / total speed) / 4 on the worker it goes to, less
//              what that worker already holds, from its measured speed, so fast workers get
//              big blocks, the last blocks are
//              small for everyone, and nobody is left holding a long block at the end. Never
//              below a time floor (the worker's round trip times its threads, so one prefetched
//              block hides the trip; and the master's per-block cost times the pool size) and
//              never above S0. No halving on timeouts: sizes follow measured speed, and the
//              outstanding blocks expected to finish last are copied when the pool drains.
//              The costliest blocks go out first (LPT order), the cheapest last; an overdue
//              block counts as needing as long again when copies are chosen.
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "scheduler/scheduler_types.h"

namespace farm {

// What a policy may look at. Filled by the scheduler.
struct WorkerView {
  WorkerId id = 0;
  int block_size = 0;
  int threads = 1;
  Seconds wait = 0;            // its current waiting time
  int fast_results_in_row = 0; // results delivered within half the waiting time, consecutively
  double work_per_second = 0;    // measured over all its threads (0: no result yet)
  Seconds rtt = 0;               // measured round trip (0: unknown)
  double held_work = 0;          // of the blocks it holds now (rendering or queued)
  Seconds lease_overhead = 0;    // per lease besides render, queue, round trip, transfer (0: unknown)
  int members = 0;               // > 0 for a relay: the site's workers sharing its threads
  int held_blocks = 0;           // how many blocks held_work is
};

struct PoolView {
  int64_t pending_pixels = 0;  // not yet handed out
  int total_threads = 1;       // over live workers
  size_t live_workers = 1;
  // Work (SchedulerConfig::block_cost's unit; pixels without one) not yet handed out, and
  // handed out without a result yet.
  double pending_work = 0, outstanding_work = 0;
  // Summed measured speed (work per second) of the workers with a result, and their threads.
  double known_work_per_second = 0;
  int known_threads = 0;
  double slowest_thread_work_per_second = 0;  // the slowest measured thread (0: none)
  Seconds age = 0;  // since the first worker joined
  int min_block = 4;
};

struct SizeChange {
  int to_size = 0;
  std::string reason;
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual const char* name() const = 0;
  // The worker missed a waiting period. Return its new size, if it changes.
  virtual std::optional<SizeChange> on_timeout(const WorkerView& w, int min_block) const = 0;
  // The worker delivered a result. Return its new size, if it changes.
  virtual std::optional<SizeChange> on_result(const WorkerView& w, int initial_size) const = 0;
  // The largest block to hand this worker now (its own size, perhaps capped by the pool state).
  // 0: nothing now; only ever for a worker that holds blocks, which will ask again.
  virtual int assignment_size(const WorkerView& w, const PoolView& pool, int min_block) const = 0;
  // The most work a block handed to this worker now may hold: larger blocks are carved further
  // (never below min_block). Infinite: sizes alone decide.
  virtual double assignment_work(const WorkerView&, const PoolView&) const { return std::numeric_limits<double>::infinity(); }
  // Whether a copy of an outstanding block may go only to a worker with a thread free to start
  // it at once (else to any worker with room in its queue, as the paper's idle worker).
  virtual bool copies_need_free_thread() const { return false; }
  // Whether the pool hands out the costliest blocks first (within each frame, by predicted
  // work; carved pieces too), so that the last blocks out are the cheapest: a misprediction
  // near the end then costs little (LPT). Else the tiling's row-major order, as the paper.
  virtual bool costliest_first() const { return false; }
  // How long the job should still take from now: a block that is overdue by more (taken to
  // need as long again) is copied before the pool drains, onto a worker with a free thread
  // expected to finish it sooner (LATE-style speculation). Infinite: copies only once the
  // pool is empty, as the paper.
  virtual double speculation_horizon(const PoolView&) const { return std::numeric_limits<double>::infinity(); }
  // How many blocks the worker may hold at once (rendering and queued); the scheduler also
  // caps it at max_leases_per_worker and by what the worker asks for.
  virtual int max_in_flight(const WorkerView&, const PoolView&) const { return 1 << 20; }
};

std::unique_ptr<Policy> make_policy(PolicyKind kind);
// S0 of the factoring policy unless given: only a cap, since it carves by predicted cost, and
// large enough that blocks never have to be smaller than they need to (results/sim/scale_study.md).
constexpr int k_factoring_block_size = 128;
// S0 of the other policies unless given (the paper's 32x32).
constexpr int k_default_block_size = 32;

// A configuration's S0: its own, or its policy's default when it gives none (block_size 0). The
// one place the defaults are applied, so every driver (CLI, master, simulator, tests) agrees.
int initial_block_size(const SchedulerConfig& config);
// Every policy, in the order the CLI lists them.
constexpr PolicyKind k_all_policies[] = {PolicyKind::fixed, PolicyKind::seed, PolicyKind::adaptive, PolicyKind::factoring};
const char* policy_name(PolicyKind kind);
// "fixed" / "seed" / "adaptive" / "factoring" -> kind; empty optional for anything else.
std::optional<PolicyKind> parse_policy(const std::string& name);

}  // namespace farm
