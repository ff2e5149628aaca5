#include "cli/sim_command.h"
#include "base/memory.h"
#include "cli/option_checks.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <spdlog/spdlog.h>

#include "base/file_checks.h"
#include "base/file_write.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "costs/cost_map.h"
#include "scene/scene_desc.h"
#include "scheduler/policy.h"
#include "sim/simulator.h"

namespace farm {

void add_sim_command(CLI::App& app, SimCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("sim", "Simulate a farm run on a described cluster (virtual time, the real scheduler)");
  cmd->add_option("--cost-map", o.cost_map_path, "Cost map from `farm single --cost-map` or `farm master --cost-map`")
      ->required();
  cmd->add_option("--cluster", o.cluster_path, "Cluster description (TOML: [[group]] count, speed, threads, latency_ms, ...)")
      ->required();
  add_scheduling_options(*cmd, o.scheduling);
  cmd->add_option("--width", o.width, "Image width to simulate (default: the cost map's; otherwise rescaled)")
      ->transform(in_range(1, CostMap::k_max_side));
  cmd->add_option("--height", o.height, "Image height to simulate (default: the cost map's)")->transform(in_range(1, CostMap::k_max_side));
  cmd->add_option("--work-factor", o.work_factor, "Multiply every cost (e.g. full spp / the map's spp)")
      ->transform(in_range(1e-6, 1e6));
  cmd->add_option("--frames", o.frames, "Frames to simulate (default: the cost map's)")->transform(in_range(1, 100000));
  cmd->add_option("--heartbeat", o.scheduling.heartbeat_interval, "Heartbeat interval in seconds")->transform(in_range(0.01, 60.0));
  cmd->add_option("--liveness", o.scheduling.liveness, "Missed heartbeats before a worker is declared dead")->transform(in_range(1, 100));
  cmd->add_option("--bytes-per-pixel", o.bytes_per_pixel, "Result bytes per pixel (3 = PNG/TGA/PPM, 16 = EXR)")
      ->transform(in_range(0.0, 64.0));
  cmd->add_option("--payload-ratio", o.payload_ratio, "Compressed/raw result size (1 = uncompressed)")
      ->transform(in_range(0.0, 1.0));
  cmd->add_option("--seed", o.seed, "Seed for drawn worker speeds/latencies and jitter (same seed, same run)")
      ->transform(in_range<uint64_t>(0, std::numeric_limits<uint64_t>::max()));
  cmd->add_flag("--cost-model", o.cost_model,
                "Let the scheduler predict each block's cost from the cost map, as a preview render would");
  cmd->add_option("--cost-model-map", o.cost_model_path,
                  "Predict block costs from this map instead (e.g. a preview's: fewer pixels and samples), "
                  "rescaled to the simulated image; the run still costs what --cost-map says");
  cmd->add_flag("!--no-recall", o.recall,
                "With [[site]]s: never move unstarted blocks between relays (default: as `farm master`, a relay whose "
                "site runs dry gets some from the relay with the most time left)");
  cmd->add_option("--recall-below", o.recall_below,
                  "With [[site]]s: also move blocks to a relay whose unstarted work lasts less than this fraction of "
                  "the time the job has left (0 = only when its site has nothing unstarted)")
      ->transform(in_range(0.0, 1.0));
  cmd->add_option("--stats", o.stats_path, "Write the run's statistics as JSON (the format of `farm master --stats`)");
  cmd->add_option("--trace", o.trace_path, "Record every scheduler call and its result (as `farm master --trace`)");
}

namespace {

SimOptions sim_options(const SimCommandOptions& o, const CostMap& map) {
  SimOptions s;
  s.scheduler = o.scheduling;
  SchedulerConfig& c = s.scheduler;
  c.width = map.width();
  c.height = map.height();
  c.frames.clear();
  for (int f = 1; f <= map.frames(); ++f) c.frames.push_back(f);
  c.result_bytes_per_pixel = o.bytes_per_pixel;
  s.bytes_per_pixel = o.bytes_per_pixel;
  s.payload_ratio = o.payload_ratio;
  s.seed = o.seed;
  s.scene_label = map.note.empty() ? o.cost_map_path : map.note;
  s.recall = o.recall;
  s.recall_below = o.recall_below;
  return s;
}

}  // namespace

int run_sim_command(const SimCommandOptions& o) {
  CostMap map, model;
  ClusterSpec cluster;
  try {
    map = CostMap::read(o.cost_map_path);
    cluster = read_cluster_spec(o.cluster_path);
    if (!o.cost_model_path.empty()) model = CostMap::read(o.cost_model_path);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_bad_input;
  }
  if (o.width || o.height || o.work_factor != 1) {
    int w = o.width ? o.width : map.width();
    int h = o.height ? o.height : (o.width ? static_cast<int>(static_cast<long>(map.height()) * w / map.width()) : map.height());
    map = map.scaled(w, h, o.work_factor, map.tile());
  }
  SimOptions s = sim_options(o, map);
  s.per_block_overhead = cluster.per_block_overhead;
  if (o.frames) {
    s.scheduler.frames.clear();
    for (int f = 1; f <= o.frames; ++f) s.scheduler.frames.push_back(f);
  }
  std::vector<SimWorkerSpec> workers = expand_cluster(cluster, o.seed);
  const std::vector<SimSiteSpec> sites = expand_sites(cluster, o.seed);
  std::ofstream trace;
  if (!o.trace_path.empty()) {
    trace.open(o.trace_path);
    if (!trace) {
      spdlog::error("cannot write the trace to '{}': {}", o.trace_path, os_reason(errno));
      return k_exit_failure;
    }
    s.trace = &trace;
  }
  if (!o.cost_model_path.empty()) {
    // Only relative costs matter to the scheduler (speeds are measured in the same unit), so the
    // model keeps its own sample count; it takes the simulated size so blocks map onto it.
    model = model.scaled(map.width(), map.height(), 1.0, map.tile());
  } else if (o.cost_model) {
    model = map;  // perfect information: the map the run is simulated with
  }
  if (o.cost_model || !o.cost_model_path.empty()) {
    s.scheduler.block_cost = [&model](Block b) {
      b.frame = std::min(b.frame, model.frames());
      return model.cost(b);
    };
  }
  SimResult r = simulate(map, workers, s, sites);
  if (trace.is_open()) {
    trace.close();
    if (!trace) {
      spdlog::error("the trace '{}' is incomplete: a write to it failed (is the disk full?)", o.trace_path);
      return k_exit_failure;
    }
  }
  if (!o.stats_path.empty()) {
    if (Status st = write_file_replacing(o.stats_path, r.stats_json, "statistics file"); !st.ok()) {
      spdlog::error("{}", st.message());
      return k_exit_failure;
    }
  }
  double speed = 0;
  for (const SimWorkerSpec& w : workers) speed += w.speed * w.threads;
  std::printf("Simulated %d x %d, %zu frame(s), %zu workers (total speed %.3g), policy %s, block %d, wait %g s\n",
              s.scheduler.width, s.scheduler.height, s.scheduler.frames.size(), workers.size(), speed,
              policy_name(o.scheduling.policy), initial_block_size(o.scheduling), o.scheduling.base_wait);
  const std::string why_not = r.failure.empty() ? "time limit or every worker lost" : r.failure;
  std::printf("  %-24s %s\n", "Completed", r.completed ? "yes" : ("NO (" + why_not + ")").c_str());
  std::printf("  %-24s %.3f s\n", "Makespan (master clock)", r.makespan);
  std::printf("  %-24s %.3f s\n", "Render window", r.window());
  std::printf("  %-24s %.3f s (total work %.3f s / total speed, from time zero)\n", "Plain bound", r.bound.plain, r.work);
  std::printf("  %-24s %.3f s (each worker from its join, start-up and first round trip; costliest min-block %.3f s)\n",
              "Honest bound", r.bound.honest(), r.bound.indivisible);
  if (r.completed && r.bound.honest() > 0)
    std::printf("  %-24s %.3f\n", "Makespan / honest bound", r.makespan / r.bound.honest());
  std::printf("  %-24s %llu, %llu reassigned, %llu late, %llu halvings, %llu workers lost\n", "Blocks",
              static_cast<unsigned long long>(r.blocks), static_cast<unsigned long long>(r.reassignments),
              static_cast<unsigned long long>(r.late_results), static_cast<unsigned long long>(r.halvings),
              static_cast<unsigned long long>(r.dead_workers));
  std::printf("  %-24s %llu in, %llu out\n", "Master messages", static_cast<unsigned long long>(r.messages_in),
              static_cast<unsigned long long>(r.messages_out));
  if (r.failed_blocks > 0)
    std::printf("  %-24s %llu failed, %llu worker(s) benched for failing blocks in a row\n", "Renderer failures",
                static_cast<unsigned long long>(r.failed_blocks), static_cast<unsigned long long>(r.benched_workers));
  if (!sites.empty())
    std::printf("  %-24s %zu relays, %llu recalls, %llu blocks moved\n", "Sites", sites.size(),
                static_cast<unsigned long long>(r.recalls), static_cast<unsigned long long>(r.recalled_blocks));
  std::printf("  %-24s %llu in %.3f s (%.2f M events/s)\n", "Events", static_cast<unsigned long long>(r.events),
              r.wall_seconds, r.wall_seconds > 0 ? static_cast<double>(r.events) / r.wall_seconds / 1e6 : 0.0);
  return r.completed ? k_exit_ok : k_exit_failure;
}

}  // namespace farm
