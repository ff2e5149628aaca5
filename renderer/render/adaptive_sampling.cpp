#include "render/adaptive_sampling.h"

#include <algorithm>
#include <cmath>

namespace rt {

int AdaptiveSchedule::automatic_first_check(int spp) {
  int first = 4;
  while (static_cast<double>(first) * first < spp) first *= 2;
  return std::min(first, spp);
}

AdaptiveSchedule::AdaptiveSchedule(const RenderSettings& s) : m_spp(std::max(1, s.spp)), m_threshold(s.noise_threshold) {
  m_first = s.min_samples > 0 ? std::min(s.min_samples, m_spp) : automatic_first_check(m_spp);
  m_on = m_threshold > 0 && m_first < m_spp;
}

bool AdaptiveSchedule::checks_at(int n) const {
  if (!m_on || n < m_first || n >= m_spp) return false;
  // first, 2 first, 4 first, ...
  for (int c = m_first; c <= n; c *= 2)
    if (c == n) return true;
  return false;
}

float AdaptiveSchedule::error(const Color& sum, const Color& sum_sq, int n) {
  if (n < 2) return 0.0f;
  const float fn = static_cast<float>(n);
  float var = 0.0f, intensity = 0.0f;
  for (int c = 0; c < 3; ++c) {
    const float mean = sum[c] / fn;
    // The variance over the n samples and one more, unseen, of 0: n equal samples do not show that
    // a pixel is smooth (a pixel on a light's rim whose every sample hit the light reads zero
    // variance), and a sample that could still miss is worth as much as the pixel's value.
    var += std::max(0.0f, (sum_sq[c] - sum[c] * sum[c] / (fn + 1.0f)) / fn);
    intensity += std::max(0.0f, mean);
  }
  return std::sqrt(var / fn) / std::sqrt(1e-4f + intensity);
}

int AdaptiveSchedule::predicted_samples(float variance_of_mean, const Color& mean, int n) const {
  if (!m_on) return m_spp;
  // The samples' variances summed over R, G, B, and their means' squares and sum.
  const float variance = 3.0f * std::max(0.0f, variance_of_mean) * static_cast<float>(std::max(n, 1));
  const float mean_sq = mean.x * mean.x + mean.y * mean.y + mean.z * mean.z;
  const float intensity = std::max(0.0f, mean.x) + std::max(0.0f, mean.y) + std::max(0.0f, mean.z);
  for (int c = m_first; c < m_spp; c *= 2) {
    // error() at c such samples: (sum_sq - sum^2 / (c + 1)) / c = ((c - 1) var + c mean^2 / (c + 1)) / c.
    const float fc = static_cast<float>(c);
    const float var = ((fc - 1.0f) * variance + fc * mean_sq / (fc + 1.0f)) / fc;
    if (std::sqrt(var / fc) / std::sqrt(1e-4f + intensity) < m_threshold) return c;
  }
  return m_spp;
}

bool AdaptiveSchedule::converged(const Color& sum, const Color& sum_sq, int n) const {
  return n >= 2 && error(sum, sum_sq, n) < m_threshold;
}

}  // namespace rt
