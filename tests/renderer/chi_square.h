// Pearson's chi-square goodness-of-fit test of a direction sampler against its density, as Nori's
// and pbrt's tests do it: directions are binned over the sphere (bins of equal solid angle,
// uniform in cos(theta) and phi), the expected count of each bin is the density integrated over
// it (a fine midpoint grid) times the number of samples, bins expected to hold fewer than 5 are
// pooled, and the statistic's p-value (the regularized upper incomplete gamma function) must not
// fall below the significance level. A sampler that draws from another distribution than the
// pdf it reports (a wrong Jacobian, a wrong roughness, a wrong mixture weight) fails.
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <algorithm>

#include "math/vec.h"

namespace chi_square {

constexpr int k_cos_bins = 16;
constexpr int k_phi_bins = 32;

inline int bin_of(rt::Vec3 d) {
  const float z = std::clamp(d.z, -1.0f, 1.0f);
  int i = static_cast<int>((z + 1) * 0.5f * k_cos_bins);
  float phi = std::atan2(d.y, d.x);
  if (phi < 0) phi += 2 * rt::k_pi;
  int j = static_cast<int>(phi / (2 * rt::k_pi) * k_phi_bins);
  i = std::clamp(i, 0, k_cos_bins - 1);
  j = std::clamp(j, 0, k_phi_bins - 1);
  return i * k_phi_bins + j;
}

// Q(a, x) = Gamma(a, x) / Gamma(a): a series below a + 1, a continued fraction above (Lentz).
inline double gamma_q(double a, double x) {
  if (x <= 0) return 1.0;
  const double log_front = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double sum = 1.0 / a, term = sum;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * 1e-15) break;
    }
    return 1.0 - sum * std::exp(log_front);
  }
  double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-15) break;
  }
  return h * std::exp(log_front);
}

struct Result {
  double statistic = 0;
  int dof = 0;
  double p_value = 1;
  double observed_total = 0, expected_total = 0;
  std::string describe() const {
    return "chi2 " + std::to_string(statistic) + " with " + std::to_string(dof) + " dof, p = " + std::to_string(p_value) +
           " (observed " + std::to_string(observed_total) + ", expected " + std::to_string(expected_total) + ")";
  }
};

// `sample(i)` draws the i-th direction (nullopt: no sample, as a sampler that fails);
// `pdf(direction)` is its solid-angle density.
inline Result test(int samples, const std::function<std::optional<rt::Vec3>(int)>& sample,
                   const std::function<double(rt::Vec3)>& pdf, int grid = 12) {
  const int bins = k_cos_bins * k_phi_bins;
  std::vector<double> observed(bins, 0), expected(bins, 0);
  for (int i = 0; i < samples; ++i)
    if (std::optional<rt::Vec3> d = sample(i)) observed[bin_of(*d)] += 1;
  const double dz = 2.0 / k_cos_bins, dphi = 2 * M_PI / k_phi_bins;
  for (int i = 0; i < k_cos_bins; ++i)
    for (int j = 0; j < k_phi_bins; ++j) {
      double sum = 0;
      for (int a = 0; a < grid; ++a)
        for (int b = 0; b < grid; ++b) {
          const double z = -1 + (i + (a + 0.5) / grid) * dz, phi = (j + (b + 0.5) / grid) * dphi;
          const double r = std::sqrt(std::max(0.0, 1 - z * z));
          sum += pdf(rt::Vec3{static_cast<float>(r * std::cos(phi)), static_cast<float>(r * std::sin(phi)),
                              static_cast<float>(z)});
        }
      expected[i * k_phi_bins + j] = sum / (grid * grid) * dz * dphi * samples;
    }
  Result r;
  double pooled_observed = 0, pooled_expected = 0;
  int used = 0;
  for (int k = 0; k < bins; ++k) {
    r.observed_total += observed[k];
    r.expected_total += expected[k];
    if (expected[k] < 5) {
      pooled_observed += observed[k];
      pooled_expected += expected[k];
      continue;
    }
    r.statistic += (observed[k] - expected[k]) * (observed[k] - expected[k]) / expected[k];
    ++used;
  }
  if (pooled_expected >= 5) {
    r.statistic += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++used;
  } else if (pooled_observed > 10) {
    r.statistic = 1e30;  // samples where the density says there are (almost) none
  }
  r.dof = std::max(1, used - 1);
  r.p_value = gamma_q(r.dof / 2.0, r.statistic / 2.0);
  return r;
}

}  // namespace chi_square
