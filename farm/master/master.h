// `farm master`: the ZeroMQ ROUTER event loop around the scheduler. It ships the scene and
// its assets to workers, hands out blocks on request, assembles the results and writes the
// images, statistics and tile map.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "cli/render_options.h"
#include "scheduler/scheduler_types.h"

namespace farm {

struct SchedulingOptions {
  int block = 32;
  int min_block = 4;
  double wait = 4.0;
  int max_copies = 2;
  std::string policy = "seed";
};

struct MasterOptions {
  RenderOptions render;
  SchedulingOptions scheduling;
  std::string bind = "tcp://*:5555";
  std::string stats_path;
  std::string tile_map_path;
  std::string cost_map_path;  // per-tile costs from the accepted blocks' render seconds
  std::string trace_path;     // every scheduler call and its outputs (scheduler/scheduler_trace.h)
  double heartbeat_interval = 1.0;  // seconds; zguide's Paranoid Pirate uses 1 s
  int liveness = 3;                 // missed heartbeats before a peer is dead
  bool compress = true;             // zstd on result pixels (results/bench_pixel_transfer.md)
  std::string build_id;             // reported to workers; empty = this binary's
  // Called once the socket is bound, with the actual endpoint (port resolved).
  std::function<void(const std::string&)> on_bound;
  // Polled by the loop; setting it aborts the job (exit code 1).
  const std::atomic<bool>* stop = nullptr;
  // Polled by the loop; a non-empty answer aborts the job with that reason (exit code 1).
  std::function<std::string()> should_abort;
};

// Runs one job to completion. Returns the process exit code (0 ok, 1 failure, 2 bad input).
int run_master(const MasterOptions& options);

// The scheduler's settings from the command line's; image size, frames and payload size are
// the caller's. Shared by the master and `farm sim` so both schedule alike.
void apply_scheduling(const SchedulingOptions& options, double heartbeat_interval, int liveness, SchedulerConfig& config);

// Identifies this build to peers (compile time + version), for Hello/Welcome checks.
std::string farm_build_id();

}  // namespace farm
