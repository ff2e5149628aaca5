#include "scheduler/policy.h"

#include <algorithm>
#include <cmath>

namespace farm {

namespace {

class FixedPolicy : public Policy {
 public:
  const char* name() const override { return "fixed"; }
  std::optional<SizeChange> on_timeout(const WorkerView&, int) const override { return std::nullopt; }
  std::optional<SizeChange> on_result(const WorkerView&, int) const override { return std::nullopt; }
  int assignment_size(const WorkerView& w, const PoolView&, int) const override { return w.block_size; }
};

class SeedPolicy : public Policy {
 public:
  const char* name() const override { return "seed"; }
  std::optional<SizeChange> on_timeout(const WorkerView& w, int min_block) const override {
    int to = std::max(min_block, w.block_size / 2);
    if (to == w.block_size) return std::nullopt;
    return SizeChange{to, "no result within the waiting time"};
  }
  std::optional<SizeChange> on_result(const WorkerView&, int) const override { return std::nullopt; }
  int assignment_size(const WorkerView& w, const PoolView&, int) const override { return w.block_size; }
};

class AdaptivePolicy : public SeedPolicy {
 public:
  const char* name() const override { return "adaptive"; }
  std::optional<SizeChange> on_result(const WorkerView& w, int initial_size) const override {
    if (w.fast_results_in_row < 2 || w.block_size >= initial_size) return std::nullopt;
    return SizeChange{std::min(initial_size, w.block_size * 2), "two results within half the waiting time"};
  }
  int assignment_size(const WorkerView& w, const PoolView& pool, int min_block) const override {
    // Guided self-scheduling: keep at least two blocks per render thread in the pool, so
    // the last blocks are small and nobody finishes long after the others.
    double share = static_cast<double>(pool.pending_pixels) / (2.0 * std::max(1, pool.total_threads));
    int cap = static_cast<int>(std::floor(std::sqrt(std::max(0.0, share))));
    return std::max(min_block, std::min(w.block_size, cap));
  }
};

}  // namespace

std::unique_ptr<Policy> make_policy(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::fixed: return std::make_unique<FixedPolicy>();
    case PolicyKind::seed: return std::make_unique<SeedPolicy>();
    case PolicyKind::adaptive: return std::make_unique<AdaptivePolicy>();
  }
  return std::make_unique<SeedPolicy>();
}

const char* policy_name(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::fixed: return "fixed";
    case PolicyKind::seed: return "seed";
    case PolicyKind::adaptive: return "adaptive";
  }
  return "?";
}

std::optional<PolicyKind> parse_policy(const std::string& name) {
  if (name == "fixed") return PolicyKind::fixed;
  if (name == "seed") return PolicyKind::seed;
  if (name == "adaptive") return PolicyKind::adaptive;
  return std::nullopt;
}

}  // namespace farm
