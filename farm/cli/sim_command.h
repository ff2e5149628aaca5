// `farm sim`: predict a farm run from a cost map and a cluster description (farm/sim/).
#pragma once

#include <CLI/CLI.hpp>

#include "scheduler/scheduler_types.h"

namespace farm {

struct SimCommandOptions {
  std::string cost_map_path;
  std::string cluster_path;
  std::string jobs_path;       // several jobs sharing the cluster, as `farm serve` shares it
  SchedulerConfig scheduling;  // policy, block, wait, copies, heartbeat, liveness
  int width = 0, height = 0;   // 0 = the cost map's; otherwise the map is rescaled
  double work_factor = 1;      // e.g. full spp / preview spp when the map is a preview
  int frames = 0;              // 0 = the cost map's frame count
  double bytes_per_pixel = 3;  // 3 = 8-bit outputs (PNG/TGA/PPM), 16 = float EXR
  double payload_ratio = 1;    // compressed / raw result size
  uint64_t seed = 1;
  bool cost_model = false;     // the scheduler knows each block's cost (a preview's map)
  std::string cost_model_path;  // ...predicted from this other map instead (e.g. a real preview's)
  std::string stats_path;
  std::string trace_path;
  bool recall = true;          // seed 002's supervisor between relays ([[site]]s), as `farm master`
  double recall_below = 0;
};

void add_sim_command(CLI::App& app, SimCommandOptions& o);
int run_sim_command(const SimCommandOptions& o);

}  // namespace farm
