// `farm plan` and `farm master --auto`: "how long will this render take on my cluster, and
// with which settings?" A cheap preview render measures a cost map, which is rescaled to the
// full job; the simulator then runs every candidate policy x block size x waiting time on the
// described cluster and ranks them by predicted render window (median over a few seeds).
#pragma once

#include <string>
#include <vector>

#include "costs/cost_map.h"
#include "scene/scene_desc.h"
#include "sim/cluster_spec.h"
#include "sim/simulator.h"

namespace farm {

struct PreviewSettings {
  int scale = 4;  // preview resolution = full / scale on each axis
  // Preview samples per pixel, 0 = min(spp, 8); costs are scaled by full spp / this. Fewer
  // samples over-predict (per-pixel work does not scale with spp): +13% at 2 spp against 8,
  // +7% at 8 spp and a quarter of the resolution (results/cost_map_scaling.md).
  int spp = 0;
  int threads = 0;
};

struct PreviewResult {
  CostMap map;           // at the full job's resolution, costs scaled to its spp
  double wall_seconds = 0;
  int width = 0, height = 0, spp = 0;
};

// Renders frame `frame` of `desc` at the preview settings, tile costs measured, and rescales
// the map to desc's resolution and spp. Throws what scene loading throws.
PreviewResult preview_cost_map(const rt::SceneDesc& desc, int frame, const PreviewSettings& preview);

struct PlanCandidate {
  PolicyKind policy = PolicyKind::seed;
  int block = 32;
  double wait = 0;         // 0 for fixed (it has no waiting time)
  double window = 0;       // predicted, median over the seeds
  double makespan = 0;     // predicted master clock at the last result
  bool completed = true;
};

struct PlanOptions {
  std::vector<PolicyKind> policies{PolicyKind::fixed, PolicyKind::seed, PolicyKind::adaptive};
  std::vector<int> blocks{8, 16, 32, 64, 128};
  std::vector<double> waits{0.25, 0.5, 1, 2, 4};
  int seeds = 3;
  int frames = 1;          // frames of the job (the map's frame is reused for each)
};

// Every candidate simulated on the cluster; sorted, best first.
std::vector<PlanCandidate> rank_candidates(const CostMap& map, const ClusterSpec& cluster, const SimOptions& base,
                                           const PlanOptions& plan);

}  // namespace farm
