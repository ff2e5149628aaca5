#include "cli/sim_command.h"
#include "base/memory.h"
#include "cli/option_checks.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>

#include <spdlog/spdlog.h>

#include "base/file_checks.h"
#include "base/file_write.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "costs/cost_map.h"
#include "scene/scene_desc.h"
#include "scheduler/policy.h"
#include "sim/jobs_spec.h"
#include "sim/simulator.h"

namespace farm {

void add_sim_command(CLI::App& app, SimCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("sim", "Simulate a farm run on a described cluster (virtual time, the real scheduler)");
  cmd->add_option("--cost-map", o.cost_map_path, "Cost map from `farm single --cost-map` or `farm master --cost-map`")
      ->required();
  cmd->add_option("--cluster", o.cluster_path, "Cluster description (TOML: [[group]] count, speed, threads, latency_ms, ...)")
      ->required();
  cmd->add_option("--jobs", o.jobs_path,
                  "Several jobs sharing the cluster as `farm serve` shares it (TOML: [[job]] name, cost_map, priority, "
                  "submit, work_factor, frames, policy, block, load_ms, setup_ms, pause, resume, reprioritise_at, new_priority)");
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

// A cost map as --width, --height and --work-factor rescale it.
CostMap rescaled(CostMap map, const SimCommandOptions& o) {
  if (o.width || o.height || o.work_factor != 1) {
    int w = o.width ? o.width : map.width();
    int h = o.height ? o.height : (o.width ? static_cast<int>(static_cast<long>(map.height()) * w / map.width()) : map.height());
    map = map.scaled(w, h, o.work_factor, map.tile());
  }
  return map;
}

// The scheduler's cost prediction from a cost map (`map` outlives the run); frames past the
// map's take its last.
std::function<double(Block)> predicted_by(const CostMap& map) {
  return [&map](Block b) {
    b.frame = std::min(b.frame, map.frames());
    return map.cost(b);
  };
}

// The summary's line of blocks, for one job's run and for several.
void print_blocks(const SimResult& r) {
  std::printf("  %-24s %llu, %llu reassigned, %llu late, %llu halvings, %llu workers lost\n", "Blocks",
              static_cast<unsigned long long>(r.blocks), static_cast<unsigned long long>(r.reassignments),
              static_cast<unsigned long long>(r.late_results), static_cast<unsigned long long>(r.halvings),
              static_cast<unsigned long long>(r.dead_workers));
}

std::string seconds_or_dash(double t) {
  char text[32];
  if (t < 0) return "-";
  std::snprintf(text, sizeof text, "%.3f", t);
  return text;
}

// The table of `farm sim --jobs`: one row per job, then the run's summary.
void print_jobs(const SimCommandOptions& o, const SimResult& r, const std::vector<SimWorkerSpec>& workers) {
  double speed = 0;
  for (const SimWorkerSpec& w : workers) speed += w.speed * w.threads;
  std::printf("Simulated %zu job(s) sharing %zu workers (total speed %.3g) as `farm serve` shares them; jobs without their own: policy %s, block %d; wait %g s\n",
              r.jobs.size(), workers.size(), speed, policy_name(o.scheduling.policy), initial_block_size(o.scheduling),
              o.scheduling.base_wait);
  std::printf("  %-16s %8s %9s %9s %9s %9s %10s %7s %7s\n", "job", "priority", "submit", "start", "finish", "makespan",
              "worker-s", "blocks", "workers");
  for (const SimJobResult& j : r.jobs)
    std::printf("  %-16s %8d %9.3f %9s %9s %9s %10.3f %7llu %7d\n", j.name.substr(0, 16).c_str(), j.priority, j.submit,
                seconds_or_dash(j.start).c_str(), seconds_or_dash(j.finish).c_str(), seconds_or_dash(j.makespan()).c_str(),
                j.worker_seconds, static_cast<unsigned long long>(j.blocks), j.workers);
  std::string paused;
  for (const SimJobResult& j : r.jobs)
    if (j.paused) paused += (paused.empty() ? "" : ", ") + j.name;
  const std::string why_not = paused.empty() ? "time limit or every worker lost" : "paused and never resumed: " + paused;
  std::printf("  %-24s %s\n", "Completed", r.completed ? "yes" : ("NO (" + why_not + ")").c_str());
  std::printf("  %-24s %.3f s (the last job's last result)\n", "Makespan (all jobs)", r.makespan);
  print_blocks(r);
  std::printf("  %-24s %llu in, %llu out\n", "Service messages", static_cast<unsigned long long>(r.messages_in),
              static_cast<unsigned long long>(r.messages_out));
  std::printf("  %-24s %llu in %.3f s\n", "Events", static_cast<unsigned long long>(r.events), r.wall_seconds);
}

// A job of the jobs file as the simulator takes it; `m` is its (rescaled) cost map.
SimJob sim_job(const JobEntrySpec& e, const CostMap& m, const SimCommandOptions& o) {
  SimJob j;
  j.name = e.name;
  j.costs = &m;
  j.scheduler = o.scheduling;
  j.scheduler.width = m.width();
  j.scheduler.height = m.height();
  j.scheduler.result_bytes_per_pixel = o.bytes_per_pixel;
  if (e.policy) j.scheduler.policy = *e.policy;
  if (e.block) j.scheduler.block_size = e.block;
  const int frames = e.frames ? e.frames : o.frames ? o.frames : m.frames();
  j.scheduler.frames.clear();
  for (int f = 1; f <= frames; ++f) j.scheduler.frames.push_back(f);
  if (o.cost_model) {
    j.scheduler.block_cost = predicted_by(m);
  }
  j.priority = e.priority;
  j.submit = e.submit;
  j.load = e.load;
  j.setup = e.setup;
  j.pause = e.pause;
  j.resume = e.resume;
  j.reprioritise = e.reprioritise_at;
  j.new_priority = e.new_priority;
  return j;
}

// `farm sim --jobs`: several jobs sharing the cluster (simulate_jobs).
int run_sim_jobs(const SimCommandOptions& o, const CostMap& base, const std::vector<SimWorkerSpec>& workers,
                 const std::vector<SimSiteSpec>& sites, double per_block_overhead) {
  if (!sites.empty() || !o.trace_path.empty() || !o.cost_model_path.empty()) {
    spdlog::error("--jobs does not model [[site]]s, --trace or --cost-model-map yet");
    return k_exit_bad_input;
  }
  for (const SimWorkerSpec& w : workers) {
    if (w.render_failures > 0) {
      spdlog::error("--jobs does not model render_failures yet (cluster file '{}')", o.cluster_path);
      return k_exit_bad_input;
    }
  }
  JobsSpec spec;
  std::vector<std::unique_ptr<CostMap>> maps;  // stable addresses: the jobs and their cost models point at them
  std::vector<SimJob> jobs;
  try {
    spec = read_jobs_spec(o.jobs_path);
    for (const JobEntrySpec& e : spec.jobs) {
      CostMap map = base;
      if (!e.cost_map.empty()) {
        try {
          map = rescaled(CostMap::read(e.cost_map), o);
        } catch (const std::exception& err) {
          throw std::invalid_argument(spec.file + ": job '" + e.name + "', 'cost_map' '" + e.cost_map + "': " + error_text(err));
        }
      }
      if (e.work_factor != 1) map = map.scaled(map.width(), map.height(), e.work_factor, map.tile());
      maps.push_back(std::make_unique<CostMap>(std::move(map)));
      const CostMap& m = *maps.back();
      jobs.push_back(sim_job(e, m, o));
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_bad_input;
  }
  SimOptions s = sim_options(o, base);
  s.per_block_overhead = per_block_overhead;
  SimResult r;
  try {
    r = simulate_jobs(jobs, workers, s);
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_bad_input;
  }
  if (!o.stats_path.empty()) {
    if (Status st = write_file_replacing(o.stats_path, r.stats_json, "statistics file"); !st.ok()) {
      spdlog::error("{}", st.message());
      return k_exit_failure;
    }
  }
  print_jobs(o, r, workers);
  return r.completed ? k_exit_ok : k_exit_failure;
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
  map = rescaled(std::move(map), o);
  SimOptions s = sim_options(o, map);
  s.per_block_overhead = cluster.per_block_overhead;
  if (o.frames) {
    s.scheduler.frames.clear();
    for (int f = 1; f <= o.frames; ++f) s.scheduler.frames.push_back(f);
  }
  std::vector<SimWorkerSpec> workers = expand_cluster(cluster, o.seed);
  const std::vector<SimSiteSpec> sites = expand_sites(cluster, o.seed);
  if (!o.jobs_path.empty()) return run_sim_jobs(o, map, workers, sites, cluster.per_block_overhead);
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
    s.scheduler.block_cost = predicted_by(model);
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
  print_blocks(r);
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
