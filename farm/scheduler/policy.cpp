#include "scheduler/policy.h"

#include <algorithm>
#include <cmath>

namespace farm {

namespace {

class FixedPolicy : public Policy {
 public:
  const char* name() const override { return "fixed"; }
  std::optional<SizeChange> on_timeout(const WorkerView&, int) const override { return std::nullopt; }
  std::optional<SizeChange> on_result(const WorkerView&, int) const override { return std::nullopt; }
  int assignment_size(const WorkerView& w, const PoolView&, int) const override { return w.block_size; }
};

class SeedPolicy : public Policy {
 public:
  const char* name() const override { return "seed"; }
  std::optional<SizeChange> on_timeout(const WorkerView& w, int min_block) const override {
    int to = std::max(min_block, w.block_size / 2);
    if (to == w.block_size) return std::nullopt;
    return SizeChange{to, "no result within the waiting time"};
  }
  std::optional<SizeChange> on_result(const WorkerView&, int) const override { return std::nullopt; }
  int assignment_size(const WorkerView& w, const PoolView&, int) const override { return w.block_size; }
};

class AdaptivePolicy : public SeedPolicy {
 public:
  const char* name() const override { return "adaptive"; }
  std::optional<SizeChange> on_result(const WorkerView& w, int initial_size) const override {
    if (w.fast_results_in_row < 2 || w.block_size >= initial_size) return std::nullopt;
    return SizeChange{std::min(initial_size, w.block_size * 2), "two results within half the waiting time"};
  }
  int assignment_size(const WorkerView& w, const PoolView& pool, int min_block) const override {
    // Guided self-scheduling: keep at least two blocks per render thread in the pool, so
    // the last blocks are small and nobody finishes long after the others.
    double share = static_cast<double>(pool.pending_pixels) / (2.0 * std::max(1, pool.total_threads));
    int cap = static_cast<int>(std::floor(std::sqrt(std::max(0.0, share))));
    return std::max(min_block, std::min(w.block_size, cap));
  }
};

// Master seconds spent per block (request, assignment, result, bookkeeping): the simulator's
// 5 us per message times about four messages, close to results/bench_farm.md's loopback figure.
// Blocks shorter than this times the pool size would queue at the master.
constexpr double k_master_seconds_per_block = 20e-6;
// A block is worth its messages only if it renders for at least this long.
constexpr double k_min_block_seconds = 2e-3;
// Factoring's x: each round hands out 1/x of the remaining work.
// x = 4 rather than the textbook 2: with costs predicted from a 1-spp quarter-size preview,
// blocks off by more than 2x are common enough on chess2 that x = 2 left one running long past
// the end at N = 100..1000 (up to 1.2 of the honest bound); at x = 4 a block may be off by 4x
// (worst 1.035 over the scale study's scenarios at two seeds, results/sim/scale_study.md).
constexpr double k_factor = 4.0;

class FactoringPolicy : public Policy {
 public:
  const char* name() const override { return "factoring"; }
  std::optional<SizeChange> on_timeout(const WorkerView&, int) const override { return std::nullopt; }
  std::optional<SizeChange> on_result(const WorkerView&, int) const override { return std::nullopt; }
  bool copies_need_free_thread() const override { return true; }
  bool costliest_first() const override { return true; }
  double speculation_horizon(const PoolView& pool) const override {
    const double remaining = remaining_seconds(pool);
    return remaining > 0 ? remaining : std::numeric_limits<double>::infinity();
  }

  // One block per thread, plus enough queued to cover a round trip at the block time this
  // policy aims for: the prefetch depth follows the measured link.
  int max_in_flight(const WorkerView& w, const PoolView& pool) const override {
    const int threads = std::max(1, w.threads);
    const double per_thread = thread_speed(w, pool);
    // Unmeasured: nothing queued behind its first blocks, which may be slow ones.
    if (!(w.work_per_second > 0) || !(per_thread > 0)) return threads;
    // The blocks it holds, as long as they are: carving stops at the first piece under the work
    // limit, so blocks come out well short of the aim (0.16 s where 0.4 s was aimed at, sim, 10
    // sites x 100, 200 ms), and a depth sized for the aim left half the threads idle while their
    // results were on the way back. Holding nothing: the aim.
    const double aim = std::max(floor_seconds(w, pool), remaining_seconds(pool) / k_factor);
    const double held_seconds = w.held_blocks > 0 && w.held_work > 0 ? w.held_work / w.held_blocks / per_thread : aim;
    const double block_seconds = std::max(k_min_block_seconds, std::min(aim, held_seconds));
    // Blocks that cover the round trip: for a relay, each of its site's workers finishes blocks
    // on its own, so each gets its cover, as it would connected directly. Counted in double and
    // bounded: the scheduler caps it far lower (max_leases_per_worker).
    const int members = std::clamp(w.members, 1, threads);
    const double cover = std::max(1.0, std::ceil(w.rtt * member_threads(w) / block_seconds));
    const double depth = threads + members * (std::isfinite(cover) ? cover : 1.0);
    return static_cast<int>(std::min(depth, static_cast<double>(1 << 20)));
  }

  // Sizes cap at S0; the work limit below does the sizing. Nothing while the worker holds
  // enough to keep it busy to the expected end.
  int assignment_size(const WorkerView& w, const PoolView& pool, int) const override {
    const double per_thread = thread_speed(w, pool);
    if (per_thread > 0 && w.held_work > 0 && backlog_seconds(w, per_thread) >= remaining_seconds(pool)) return 0;
    return w.block_size;
  }

  double assignment_work(const WorkerView& w, const PoolView& pool) const override {
    const double per_thread = thread_speed(w, pool);
    double probe = probe_work(pool);
    if (!(per_thread > 0)) return probe;
    const double remaining = remaining_seconds(pool);
    // What it holds already keeps each of its threads busy for the backlog, and counts against
    // its share: no worker is committed beyond 1/x of the time left, so a block the preview
    // under-predicts by up to x still ends with everyone else (a queued block of the full
    // share behind another was what ran past the end: chess2, N=1000, 1.23 -> 1.03 of the bound).
    double seconds = remaining / k_factor - backlog_seconds(w, per_thread);
    // Slow start: while the job is young, workers are still joining and the remaining time is
    // overestimated; no block may take longer than the job has run so far.
    seconds = std::min(seconds, pool.age);
    const double work = std::max(seconds, floor_seconds(w, pool)) * per_thread;
    return w.work_per_second > 0 ? work : std::min(work, probe);
  }

 private:
  // The first block of a worker not measured yet: a quarter of an equal share of 1/x of the work
  // per thread (guided self-scheduling would give the whole share, too much for a slow worker),
  // and no more than an average block of 4 x min_block a side: it is there to measure speed.
  static double probe_work(const PoolView& pool) {
    const double share = left_work(pool) / (4 * k_factor * std::max(1, pool.total_threads));
    if (pool.pending_pixels <= 0) return share;
    const double side = 4.0 * pool.min_block;
    return std::min(share, pool.pending_work / static_cast<double>(pool.pending_pixels) * side * side);
  }
  static double backlog_seconds(const WorkerView& w, double per_thread) {
    return w.held_work / (per_thread * std::max(1, w.threads));
  }
  // Work not yet done: the pool, and half of what is out on average.
  static double left_work(const PoolView& pool) { return pool.pending_work + 0.5 * pool.outstanding_work; }
  // The ideal time left if every live worker shared everything left (0 when nothing measured).
  static double remaining_seconds(const PoolView& pool) {
    if (pool.known_threads == 0) return 0;
    const double mean = pool.known_work_per_second / pool.known_threads;
    const double total = pool.known_work_per_second + mean * std::max(0, pool.total_threads - pool.known_threads);
    return left_work(pool) / total;
  }
  // The threads of one machine: a worker's own; for a relay, a site worker's share of the site's.
  // Each machine finishes blocks on its own and needs its own cover for the round trip (a relay's
  // blocks sized to cover the trip with all the site's threads were minutes long: sim, 10 x 100).
  static double member_threads(const WorkerView& w) {
    const int threads = std::max(1, w.threads);
    return static_cast<double>(threads) / std::clamp(w.members, 1, threads);
  }
  // Pixels per second of one of its threads: measured, or for a worker without a result yet
  // the slowest measured thread's, until its first result says otherwise (0: none measured).
  static double thread_speed(const WorkerView& w, const PoolView& pool) {
    if (w.work_per_second > 0) return w.work_per_second / std::max(1, w.threads);
    if (pool.slowest_thread_work_per_second > 0) return pool.slowest_thread_work_per_second;
    return pool.known_threads > 0 ? pool.known_work_per_second / pool.known_threads : 0.0;
  }
  // No block shorter than its messages are worth, than the master can serve for the whole
  // pool, or than the worker's round trip times its (one machine's) threads (one queued block
  // hides the trip);
  // and none shorter than sqrt(time left x the worker's measured per-lease overhead). Blocks of
  // time b cost overhead/b of the time left in overhead and may end up to b apart: the sum is
  // least at b = sqrt(left x overhead), the square-root rule for chunk sizes (Kruskal and Weiss,
  // 1985). Without it a worker whose every lease costs a few ms (a slow link, its own per-block
  // work under a CPU quota) was fed 4x4 blocks at the end of small jobs: paper6 160x120, 135
  // blocks where fixed 32 needs 20.
  static double floor_seconds(const WorkerView& w, const PoolView& pool) {
    return std::max({k_min_block_seconds, w.rtt * member_threads(w),
                     k_master_seconds_per_block * static_cast<double>(pool.live_workers),
                     std::sqrt(remaining_seconds(pool) * std::max(0.0, w.lease_overhead))});
  }
};

}  // namespace

std::unique_ptr<Policy> make_policy(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::fixed: return std::make_unique<FixedPolicy>();
    case PolicyKind::seed: return std::make_unique<SeedPolicy>();
    case PolicyKind::adaptive: return std::make_unique<AdaptivePolicy>();
    case PolicyKind::factoring: return std::make_unique<FactoringPolicy>();
  }
  return std::make_unique<SeedPolicy>();
}

const char* policy_name(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::fixed: return "fixed";
    case PolicyKind::seed: return "seed";
    case PolicyKind::adaptive: return "adaptive";
    case PolicyKind::factoring: return "factoring";
  }
  return "?";
}

std::optional<PolicyKind> parse_policy(const std::string& name) {
  for (PolicyKind k : k_all_policies)
    if (name == policy_name(k)) return k;
  return std::nullopt;
}

int initial_block_size(const SchedulerConfig& config) {
  if (config.block_size > 0) return config.block_size;
  return config.policy == PolicyKind::factoring ? k_factoring_block_size : k_default_block_size;
}

}  // namespace farm
