// `farm single`: render a scene in this process, the baseline the farm is compared against.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/render_options.h"

namespace farm {

struct SingleOptions {
  RenderOptions render;
  int threads = 0;  // 0 = all cores
  std::string stats_path;
  std::string cost_map_path;  // empty: render the frame in one call, measure nothing per tile
  int cost_tile = 4;
};

void add_single_command(CLI::App& app, SingleOptions& options);
// Returns the process exit code: 0 ok, 1 runtime failure, 2 bad input.
int run_single(const SingleOptions& options);

}  // namespace farm
