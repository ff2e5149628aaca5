// Block-size policies: small strategy objects consulted by the scheduler.
//   fixed    - every block is S0; no halving (steps 1-3, 6-7 of docs/architecture.md, Core algorithm).
//   seed     - the paper's rule: halve a worker's size each time it exceeds its waiting time.
//   adaptive - seed, plus: (a) tail shrink: once little work is left, cap the size so that
//              at least two blocks per render thread remain (guided self-scheduling); (b)
//              recovery: a worker that delivers within half its waiting time twice in a row
//              grows back by doubling, never above S0.
#pragma once

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
};

struct PoolView {
  int64_t pending_pixels = 0;  // not yet handed out
  int total_threads = 1;       // over live workers
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
  virtual int assignment_size(const WorkerView& w, const PoolView& pool, int min_block) const = 0;
};

std::unique_ptr<Policy> make_policy(PolicyKind kind);
const char* policy_name(PolicyKind kind);
// "fixed" / "seed" / "adaptive" -> kind; empty optional for anything else.
std::optional<PolicyKind> parse_policy(const std::string& name);

}  // namespace farm
