#include "sampling/pixel_filter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace rt {

namespace {
constexpr double k_pi_d = 3.14159265358979323846;
}

float PixelFilterSampler::weight(PixelFilter filter, float width, float x) {
  const double half = 0.5 * width;
  if (std::fabs(x) > half) return 0.0f;
  switch (filter) {
    case PixelFilter::box:
      return 1.0f;
    case PixelFilter::gaussian: {
      const double sigma = width / 6.0;  // the support is +-3 sigma
      return static_cast<float>(std::exp(-0.5 * x * x / (sigma * sigma)));
    }
    case PixelFilter::blackman_harris: {
      // The four-term Blackman-Harris window over the support (the shape Cycles uses, width 1.5).
      const double t = 2 * k_pi_d * (x / width + 0.5);
      return static_cast<float>(0.35875 - 0.48829 * std::cos(t) + 0.14128 * std::cos(2 * t) - 0.01168 * std::cos(3 * t));
    }
  }
  return 0.0f;
}

PixelFilterSampler::PixelFilterSampler(PixelFilter filter, float width) : m_filter(filter), m_width(width) {
  if (filter == PixelFilter::box) return;
  // Cumulative weight on a fine grid (trapezoids), then inverted at k_table + 1 evenly spaced
  // levels. Double precision and a fixed order: the table is the same on every machine.
  constexpr int fine = 8192;
  std::vector<double> cdf(fine + 1, 0.0);
  const double half = 0.5 * width, step = width / fine;
  for (int i = 1; i <= fine; ++i) {
    double a = weight(filter, width, static_cast<float>(-half + (i - 1) * step));
    double b = weight(filter, width, static_cast<float>(-half + i * step));
    cdf[i] = cdf[i - 1] + 0.5 * (a + b) * step;
  }
  const double total = cdf[fine];
  int j = 0;
  for (int k = 0; k <= k_table; ++k) {
    const double level = total * k / k_table;
    while (j < fine - 1 && cdf[j + 1] < level) ++j;
    const double span = cdf[j + 1] - cdf[j];
    const double frac = span > 0 ? std::clamp((level - cdf[j]) / span, 0.0, 1.0) : 0.0;
    m_inverse_cdf[k] = static_cast<float>(-half + (j + frac) * step);
  }
  m_inverse_cdf[0] = static_cast<float>(-half);
  m_inverse_cdf[k_table] = static_cast<float>(half);
}

const PixelFilterSampler& PixelFilterSampler::shared(PixelFilter filter, float width) {
  static std::mutex mutex;
  static std::map<std::pair<int, uint32_t>, std::unique_ptr<PixelFilterSampler>> samplers;
  uint32_t width_bits = 0;
  std::memcpy(&width_bits, &width, sizeof width_bits);  // exact key: the same width, the same table
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<PixelFilterSampler>& s = samplers[{static_cast<int>(filter), width_bits}];
  if (!s) s = std::make_unique<PixelFilterSampler>(filter, width);
  return *s;
}

float PixelFilterSampler::offset(float u) const {
  if (m_filter == PixelFilter::box) return (u - 0.5f) * m_width;
  const float x = std::clamp(u, 0.0f, 1.0f) * k_table;
  const int i = std::min(static_cast<int>(x), k_table - 1);
  const float f = x - static_cast<float>(i);
  return m_inverse_cdf[i] + (m_inverse_cdf[i + 1] - m_inverse_cdf[i]) * f;
}

}  // namespace rt
