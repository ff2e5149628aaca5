#include "cli/plan_command.h"
#include "base/memory.h"
#include "base/limits.h"
#include "cli/option_checks.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "cli/exit_codes.h"
#include "scene/scene_desc.h"
#include "scheduler/policy.h"

namespace farm {

void add_plan_command(CLI::App& app, PlanCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("plan", "Predict the render time on a cluster and recommend policy, block size, wait");
  add_render_options(*cmd, o.render, false);
  cmd->add_option("--cluster", o.cluster_path, "Cluster description (TOML, see `farm sim`)")->required();
  cmd->add_option("--preview-scale", o.preview.scale, "Preview resolution = full / this, on each axis")
      ->transform(in_range(1, 64));
  cmd->add_option("--preview-spp", o.preview.spp, "Preview samples per pixel (default: min(spp, 8))")->transform(in_range(1, rt::k_max_spp));
  cmd->add_option("--threads", o.preview.threads, "Threads for the preview render (default: all cores)")
      ->transform(in_range(0, k_max_threads));
  cmd->add_option("--top", o.top, "Candidates shown")->transform(in_range(1, 1000));
  cmd->add_option("--cost-map", o.cost_map_out, "Also write the preview's cost map (rescaled to the full job)");
}

namespace {

struct Plan {
  PreviewResult preview;
  std::vector<PlanCandidate> ranked;
  int frames = 1;
};

Plan make_plan(const RenderOptions& render, const std::string& cluster_path, const PreviewSettings& preview,
               const SchedulerConfig& liveness) {
  ClusterSpec cluster = read_cluster_spec(cluster_path);
  rt::SceneDesc desc = load_scene_desc(render);
  std::vector<int> frames = frames_to_render(render, desc);
  Plan p;
  p.frames = static_cast<int>(frames.size());
  p.preview = preview_cost_map(desc, frames.front(), preview);
  SimOptions base;
  base.scheduler.heartbeat_interval = liveness.heartbeat_interval;
  base.scheduler.liveness = liveness.liveness;
  base.scene_label = render.scene_path;
  PlanOptions options;
  options.frames = p.frames;
  p.ranked = rank_candidates(p.preview.map, cluster, base, options);
  return p;
}

void print_plan(const Plan& p, int top) {
  const CostMap& m = p.preview.map;
  std::printf("Preview %dx%d, %d spp rendered in %.2f s; predicted work %.2f s of one thread per frame at %dx%d\n",
              p.preview.width, p.preview.height, p.preview.spp, p.preview.wall_seconds, m.total(), m.width(), m.height());
  std::printf("  %-9s %6s %8s %14s %14s\n", "policy", "block", "wait", "window (s)", "makespan (s)");
  int shown = 0;
  for (const PlanCandidate& c : p.ranked) {
    if (shown++ >= top) break;
    std::printf("  %-9s %6d %8s %14.2f %14.2f%s\n", policy_name(c.policy), c.block,
                c.wait == 0 ? "-" : (std::to_string(c.wait).substr(0, 4)).c_str(), c.window, c.makespan,
                c.completed ? "" : "  (did not finish)");
  }
}

SchedulerConfig to_scheduling(const PlanCandidate& c, SchedulerConfig s) {
  s.policy = c.policy;
  s.block_size = c.block;
  if (c.wait > 0) s.base_wait = c.wait;
  s.min_block = std::min(s.min_block, c.block);
  return s;
}

}  // namespace

int run_plan_command(const PlanCommandOptions& o) {
  Plan p;
  try {
    p = make_plan(o.render, o.cluster_path, o.preview, SchedulerConfig{});
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_bad_input;
  }
  print_plan(p, o.top);
  if (!o.cost_map_out.empty()) {
    try {
      p.preview.map.write(o.cost_map_out);
    } catch (const std::exception& e) {
      spdlog::error("{}", error_text(e));
      return k_exit_failure;
    }
  }
  if (p.ranked.empty() || !p.ranked.front().completed) {
    spdlog::error("no candidate finished on this cluster (every worker lost?)");
    return k_exit_failure;
  }
  const PlanCandidate& best = p.ranked.front();
  std::printf("Recommended: --policy %s --block %d", policy_name(best.policy), best.block);
  if (best.wait > 0) std::printf(" --wait %g", best.wait);
  std::printf("  (predicted render window %.2f s)\n", best.window);
  return k_exit_ok;
}

SchedulerConfig recommend_scheduling(const RenderOptions& render, const std::string& cluster_path,
                                     const PreviewSettings& preview, const SchedulerConfig& current) {
  Plan p = make_plan(render, cluster_path, preview, current);
  print_plan(p, 5);
  if (p.ranked.empty() || !p.ranked.front().completed)
    throw std::runtime_error("--auto: no candidate finished on the cluster in '" + cluster_path + "'");
  return to_scheduling(p.ranked.front(), current);
}

}  // namespace farm
