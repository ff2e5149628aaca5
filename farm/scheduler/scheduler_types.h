// Inputs and outputs of the scheduler. Time is always an argument (seconds on the driver's
// clock: real for the ZeroMQ master, virtual for the simulator); the scheduler never reads one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scheduler/block.h"
#include "scheduler/ids.h"

namespace farm {

// Whether a result names a lease the job gave, held by the sender, for the same rectangle
// (Scheduler::check_lease).
enum class LeaseCheck : uint8_t { ok, unknown_lease, wrong_rectangle };

enum class PolicyKind { fixed, seed, adaptive, factoring };

// The policy a job gets when nobody chooses one: factoring (with the master's preview of block
// costs) has a median within 1.04 of the honest bound in every scenario of the scale study, 2 to
// 10,000 workers, where the paper's halving (`seed`, S0 64 there) reaches 7.1 at 1,000 workers
// and 8.8 at 10,000 on the chess scene (results/sim/scale_study.md; issue 28's WAN case:
// results/sim/default_policy.md). `seed` stays a named policy for the paper's experiments.
inline constexpr PolicyKind k_default_policy = PolicyKind::factoring;


struct SchedulerConfig {
  int width = 0, height = 0;
  std::vector<int> frames{1};
  int block_size = 0;        // S0: side of the initial tiling; 0 = the policy's (initial_block_size)
  int min_block = 4;         // halving never goes below this
  // Block origins and sides are multiples of this, except where the image ends: a renderer
  // whose regions are exact only on its own grid (POV-Ray: 4) sets it. block_size and
  // min_block are rounded up to it.
  int grid = 1;
  Seconds base_wait = 4.0;   // waiting time before the network terms are added
  int max_copies = 2;        // holders of one block at once, the first included
  PolicyKind policy = k_default_policy;
  Seconds heartbeat_interval = k_default_heartbeat_interval;
  int liveness = k_default_liveness;  // a worker silent for interval * liveness is dead
  double result_bytes_per_pixel = 8;  // expected payload per pixel, for the network-scaled wait
  // Predicted work of a block in any unit (e.g. seconds at speed 1 from a preview cost map).
  // Speeds are measured in this unit, so blocks of similar predicted cost take similar time
  // whatever their pixels cost. Empty: a block's work is its pixel count.
  std::function<double(const Block&)> block_cost;
};

struct Assignment {
  WorkerId worker = 0;
  AttemptId attempt = 0;
  BlockId block_id = 0;
  Block block;
  bool is_copy = false;  // a reassignment of a block someone else already holds
};

struct Cancel {
  WorkerId worker = 0;
  AttemptId attempt = 0;
};

enum class ResultOutcome {
  accepted,  // the first result for this block: commit its pixels
  late,      // the lease was already settled (cancelled, reassigned and won, worker declared dead)
};

struct ResultReply {
  ResultOutcome outcome = ResultOutcome::late;
  BlockId block_id = 0;
  Block block;
  std::vector<Cancel> cancels;  // the other holders of the block, to be told to stop
};

// Something a policy decided, kept for the statistics ("every halving with its reason").
struct PolicyDecision {
  Seconds time = 0;
  WorkerId worker = 0;
  int from_size = 0, to_size = 0;
  std::string reason;
};

}  // namespace farm
