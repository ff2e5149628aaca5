// Filter importance sampling of the pixel filter: a uniform number becomes an offset from the
// pixel's centre distributed like the (separable) filter, so samples land where the filter puts
// weight and every sample of the pixel counts the same. A pixel then depends on its own samples
// only, which keeps any tiling of the image byte-identical. Negative filter lobes are not
// representable this way; the filters offered have none.
#pragma once

#include <array>

#include "scene/render_settings.h"

namespace rt {

class PixelFilterSampler {
 public:
  PixelFilterSampler(PixelFilter filter, float width);
  // The sampler of (filter, width), built once per process. Building one integrates the filter
  // on 8192 points (about 0.5 ms); render_rect runs once per block, so building it there cost a
  // 4x4 block more than rendering it. Thread-safe; the reference stays valid until exit.
  static const PixelFilterSampler& shared(PixelFilter filter, float width);
  // u in [0, 1) -> offset in [-width / 2, width / 2] along one axis.
  float offset(float u) const;
  // The filter's (unnormalised) weight at offset x, for tests and documentation.
  static float weight(PixelFilter filter, float width, float x);

 private:
  static constexpr int k_table = 512;
  PixelFilter m_filter;
  float m_width;
  std::array<float, k_table + 1> m_inverse_cdf{};  // offset at u = i / k_table
};

}  // namespace rt
