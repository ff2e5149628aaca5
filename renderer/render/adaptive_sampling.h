// Per-pixel adaptive sampling that keeps any tiling exact. A pixel stops taking samples once its
// own error estimate is under the threshold, the estimate taken only at fixed sample counts
// (first_check, then each doubling: the sample sequence's best-stratified prefixes) and only
// from the pixel's own samples. Nothing reads a neighbour, so a pixel's sample count and value
// depend on (scene, settings, frame, x, y) alone, as without adaptive sampling. (Cycles' rule
// dilates its decision across neighbours at every check, which makes a block's border pixels
// depend on pixels outside the block.)
//
// The estimate: the standard error of the pixel's mean (summed over R, G and B) relative to the
// square root of its intensity, so that a threshold asks for about the same visible noise in
// dark and bright pixels once tone-mapped:
//   error = sqrt(sum_c var_c / n) / sqrt(1e-4 + sum_c mean_c)
// with var_c the variance of channel c over the n samples and one more, unseen, of value 0:
// (sum_sq_c - sum_c^2 / (n + 1)) / n. Without that sample, n equal samples read as no noise at
// all, and pixels on a light's rim whose every sample hit the light stopped at the first check
// with the light's full value: on a Cornell box 0.9% of the pixels held 32% of the squared error
// (results/bench_convergence_adaptive.md). With it, the error of such a pixel falls as 1/n.
#pragma once

#include "math/vec.h"
#include "scene/render_settings.h"

namespace rt {

class AdaptiveSchedule {
 public:
  explicit AdaptiveSchedule(const RenderSettings& s);
  bool on() const { return m_on; }
  int first_check() const { return m_first; }
  // Whether a pixel with `n` samples is checked (never at spp: it stops there anyway).
  bool checks_at(int n) const;
  // Whether a pixel whose samples sum to `sum` (and their squares to `sum_sq`) over `n`
  // samples may stop.
  bool converged(const Color& sum, const Color& sum_sq, int n) const;

  // The error estimate above (0 for fewer than two samples: never converged on one).
  static float error(const Color& sum, const Color& sum_sq, int n);
  // The first check when min_samples is 0: the power of two at or above sqrt(spp), at least 4,
  // at most spp.
  static int automatic_first_check(int spp);

  // The samples a pixel would take whose variance pass (scene/passes.h: the variance of its mean,
  // averaged over R, G, B) reads `variance_of_mean` with colour `mean` after `n` samples, were its
  // samples' variance and mean to stay what they are: the first check at which the estimate above
  // would pass, or spp. The preview's cost model (farm/costs/preview_cost_map.cpp); spp when
  // adaptive sampling is off.
  int predicted_samples(float variance_of_mean, const Color& mean, int n) const;

 private:
  bool m_on = false;
  int m_first = 0, m_spp = 1;
  float m_threshold = 0;
};

}  // namespace rt
