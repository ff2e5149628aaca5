// `farm plan` and `farm master --auto`: "how long will this render take on my cluster, and
// with which settings?" A cheap preview render measures a cost map, which is rescaled to the
// full job; the simulator then runs every candidate policy x block size x waiting time on the
// described cluster and ranks them by predicted render window (median over a few seeds).
#pragma once

#include <string>
#include <vector>

#include "costs/cost_map.h"
#include "costs/preview_cost_map.h"
#include "scene/scene_desc.h"
#include "sim/cluster_spec.h"
#include "sim/simulator.h"

namespace farm {

struct PlanCandidate {
  PolicyKind policy = PolicyKind::seed;
  int block = 32;
  double wait = 0;         // 0 for fixed and factoring (they have no waiting time)
  double window = 0;       // predicted, median over the seeds
  double makespan = 0;     // predicted master clock at the last result
  bool completed = true;
};

struct PlanOptions {
  std::vector<PolicyKind> policies{PolicyKind::fixed, PolicyKind::seed, PolicyKind::adaptive, PolicyKind::factoring};
  std::vector<int> blocks{8, 16, 32, 64, 128};
  std::vector<double> waits{0.25, 0.5, 1, 2, 4};
  int seeds = 3;
  int frames = 1;          // frames of the job (the map's frame is reused for each)
};

// Every candidate simulated on the cluster; sorted, best first.
std::vector<PlanCandidate> rank_candidates(const CostMap& map, const ClusterSpec& cluster, const SimOptions& base,
                                           const PlanOptions& plan);

}  // namespace farm
