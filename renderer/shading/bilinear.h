// Bilinear interpolation of an image texture at (s, t), written once for both places texels
// come from (an image decoded into memory, or OpenImageIO's tile cache for images beyond the
// memory budget), so that a lookup gives the same bits whichever holds the image: a worker
// with a smaller --texture-cache renders the same pixels as one with a larger one.
//
// Convention (OpenImageIO's): s to the right, t down the image, texel (i, j) centred at
// ((i + 0.5) / width, (j + 0.5) / height).
#pragma once

#include <algorithm>
#include <cmath>

#include "scene/scene_desc.h"

namespace rt {

// The coordinate reduced to one period of the wrap mode first, so that huge or negative
// coordinates never overflow the texel index.
inline float reduce_coordinate(float s, TextureWrap wrap) {
  switch (wrap) {
    case TextureWrap::clamp: return std::clamp(s, -1.0f, 2.0f);
    case TextureWrap::mirror: return s - 2.0f * std::floor(s * 0.5f);
    default: return s - std::floor(s);
  }
}

// Texel index i (which may lie one outside [0, n) after reduce_coordinate) wrapped into [0, n).
inline int wrap_texel(int i, int n, TextureWrap wrap) {
  switch (wrap) {
    case TextureWrap::clamp: return std::clamp(i, 0, n - 1);
    case TextureWrap::mirror: {
      int period = 2 * n;
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - 1 - i;
    }
    default:
      i %= n;
      return i < 0 ? i + n : i;
  }
}

struct BilinearFootprint {
  int x0, x1, y0, y1;  // wrapped texel columns and rows
  float fx, fy;        // weights of x1 and y1
};

inline BilinearFootprint bilinear_footprint(float s, float t, int width, int height, TextureWrap ws, TextureWrap wt) {
  float x = reduce_coordinate(s, ws) * static_cast<float>(width) - 0.5f;
  float y = reduce_coordinate(t, wt) * static_cast<float>(height) - 0.5f;
  float fx0 = std::floor(x), fy0 = std::floor(y);
  int ix = static_cast<int>(fx0), iy = static_cast<int>(fy0);
  BilinearFootprint f;
  f.fx = x - fx0;
  f.fy = y - fy0;
  f.x0 = wrap_texel(ix, width, ws);
  f.x1 = wrap_texel(ix + 1, width, ws);
  f.y0 = wrap_texel(iy, height, wt);
  f.y1 = wrap_texel(iy + 1, height, wt);
  return f;
}

// `texel(x, y, out)` writes `channels` floats of texel (x, y). Writes `channels` results to
// `out`; with d_ds/d_dt, also the first channel's derivatives per unit of s and t.
template <class Fetch>
void bilinear_lookup(float s, float t, int width, int height, TextureWrap ws, TextureWrap wt, int channels,
                     Fetch&& texel, float* out, float* d_ds = nullptr, float* d_dt = nullptr) {
  BilinearFootprint f = bilinear_footprint(s, t, width, height, ws, wt);
  float a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0}, c[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
  texel(f.x0, f.y0, a);
  texel(f.x1, f.y0, b);
  texel(f.x0, f.y1, c);
  texel(f.x1, f.y1, d);
  for (int k = 0; k < channels; ++k) {
    float top = a[k] + (b[k] - a[k]) * f.fx;
    float bottom = c[k] + (d[k] - c[k]) * f.fx;
    out[k] = top + (bottom - top) * f.fy;
  }
  if (d_ds) *d_ds = ((b[0] - a[0]) * (1 - f.fy) + (d[0] - c[0]) * f.fy) * static_cast<float>(width);
  if (d_dt) *d_dt = ((c[0] - a[0]) * (1 - f.fx) + (d[0] - b[0]) * f.fx) * static_cast<float>(height);
}

}  // namespace rt
