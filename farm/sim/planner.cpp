#include "sim/planner.h"

#include <algorithm>
#include <chrono>

#include "scheduler/policy.h"

namespace farm {

namespace {

PlanCandidate simulate_candidate(const CostMap& map, const ClusterSpec& cluster, SimOptions o, const PlanOptions& plan,
                                 PolicyKind policy, int block, double wait) {
  o.scheduler.policy = policy;
  o.scheduler.block_size = block;
  o.scheduler.min_block = std::min(o.scheduler.min_block, block);
  // Neither fixed nor factoring acts on timeouts: a waiting time that never passes.
  o.scheduler.base_wait = policy == PolicyKind::fixed || policy == PolicyKind::factoring ? 1e6 : wait;
  if (policy == PolicyKind::factoring) {
    // The master gives factoring its preview's costs; here the map is that preview.
    o.scheduler.block_cost = [&map](Block b) {
      b.frame = std::min(b.frame, map.frames());
      return map.cost(b);
    };
  }
  std::vector<double> windows, makespans;
  PlanCandidate c{policy, block, policy == PolicyKind::fixed || policy == PolicyKind::factoring ? 0 : wait};
  for (int seed = 1; seed <= std::max(1, plan.seeds); ++seed) {
    o.seed = static_cast<uint64_t>(seed);
    SimResult r = simulate(map, expand_cluster(cluster, o.seed), o, expand_sites(cluster, o.seed));
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
    if (policy == PolicyKind::factoring) {  // no waiting time, and S0 is only its cap
      out.push_back(simulate_candidate(map, cluster, o, plan, policy, k_factoring_block_size, 0));
      continue;
    }
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
