// `farm plan`: predict a render's time on a described cluster and recommend the settings
// (preview cost map + simulator, farm/sim/planner.h). `farm master --auto` uses the same.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/render_options.h"
#include "master/master.h"
#include "sim/planner.h"

namespace farm {

struct PlanCommandOptions {
  RenderOptions render;
  std::string cluster_path;
  PreviewSettings preview;
  int top = 10;               // rows of the ranking printed
  std::string cost_map_out;   // optional: keep the rescaled preview map
};

void add_plan_command(CLI::App& app, PlanCommandOptions& o);
int run_plan_command(const PlanCommandOptions& o);

// The recommendation for a master job: renders the preview, simulates, prints the short
// ranking, and returns `current` with the best policy, block size and wait (throws on bad
// scene or cluster files). Heartbeat and liveness are taken from `current`.
SchedulerConfig recommend_scheduling(const RenderOptions& render, const std::string& cluster_path,
                                     const PreviewSettings& preview, const SchedulerConfig& current);

}  // namespace farm
