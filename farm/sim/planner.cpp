#include "sim/planner.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <chrono>

#include "render/render.h"
#include "scheduler/policy.h"
#include "costs/cost_map_render.h"

namespace farm {

PreviewResult preview_cost_map(const rt::SceneDesc& desc, int frame, const PreviewSettings& preview) {
  const auto t0 = std::chrono::steady_clock::now();
  rt::SceneDesc small = desc;
  rt::RenderSettings& s = small.settings;
  s.width = std::max(1, desc.settings.width / std::max(1, preview.scale));
  s.height = std::max(1, desc.settings.height / std::max(1, preview.scale));
  s.spp = preview.spp > 0 ? std::clamp(preview.spp, 1, desc.settings.spp) : std::min(desc.settings.spp, 8);
  const int threads = preview.threads > 0 ? preview.threads : tbb::info::default_concurrency();
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  rt::LoadOptions load;
  load.embree_threads = threads;
  std::unique_ptr<rt::Scene> scene = rt::load_scene(small, load);
  // Tiles of 4 preview pixels are scale x 4 full pixels: fine enough for blocks down to 8.
  CostMap map(s.width, s.height, 4, 1);
  std::vector<float> rgba(static_cast<size_t>(s.width) * s.height * 4);
  render_frame_with_costs(*scene, frame, rgba.data(), map, 1);
  PreviewResult r;
  r.width = s.width;
  r.height = s.height;
  r.spp = s.spp;
  const double work_factor = static_cast<double>(desc.settings.spp) / s.spp;
  r.map = map.scaled(desc.settings.width, desc.settings.height, work_factor, 4);
  r.map.note = "preview " + std::to_string(s.width) + "x" + std::to_string(s.height) + " spp " + std::to_string(s.spp) +
               " scaled to " + std::to_string(desc.settings.width) + "x" + std::to_string(desc.settings.height) +
               " spp " + std::to_string(desc.settings.spp);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

PlanCandidate simulate_candidate(const CostMap& map, const ClusterSpec& cluster, SimOptions o, const PlanOptions& plan,
                                 PolicyKind policy, int block, double wait) {
  o.scheduler.policy = policy;
  o.scheduler.block_size = block;
  o.scheduler.min_block = std::min(o.scheduler.min_block, block);
  o.scheduler.base_wait = policy == PolicyKind::fixed ? 1e6 : wait;
  std::vector<double> windows, makespans;
  PlanCandidate c{policy, block, policy == PolicyKind::fixed ? 0 : wait};
  for (int seed = 1; seed <= std::max(1, plan.seeds); ++seed) {
    o.seed = static_cast<uint64_t>(seed);
    SimResult r = simulate(map, expand_cluster(cluster, o.seed), o);
    c.completed = c.completed && r.completed;
    windows.push_back(r.window());
    makespans.push_back(r.makespan);
  }
  std::sort(windows.begin(), windows.end());
  std::sort(makespans.begin(), makespans.end());
  c.window = windows[windows.size() / 2];
  c.makespan = makespans[makespans.size() / 2];
  return c;
}

}  // namespace

std::vector<PlanCandidate> rank_candidates(const CostMap& map, const ClusterSpec& cluster, const SimOptions& base,
                                           const PlanOptions& plan) {
  SimOptions o = base;
  o.scheduler.width = map.width();
  o.scheduler.height = map.height();
  o.scheduler.frames.clear();
  for (int f = 1; f <= std::max(1, plan.frames); ++f) o.scheduler.frames.push_back(f);
  o.per_block_overhead = cluster.per_block_overhead;
  std::vector<PlanCandidate> out;
  for (PolicyKind policy : plan.policies) {
    for (int block : plan.blocks) {
      if (policy == PolicyKind::fixed) {
        out.push_back(simulate_candidate(map, cluster, o, plan, policy, block, 0));
        continue;
      }
      for (double wait : plan.waits) out.push_back(simulate_candidate(map, cluster, o, plan, policy, block, wait));
    }
  }
  // Unfinished runs last; ties keep the listing order (fixed first, smaller blocks first).
  std::stable_sort(out.begin(), out.end(), [](const PlanCandidate& a, const PlanCandidate& b) {
    if (a.completed != b.completed) return a.completed;
    return a.window < b.window;
  });
  return out;
}

}  // namespace farm
