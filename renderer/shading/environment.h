// Light arriving from infinity: a uniform colour or a lat-long image, importance-sampled
// by luminance so path tracing of bright skies converges quickly.
#pragma once

#include <vector>

#include "math/vec.h"
#include "sampling/warp.h"
#include "shading/texture.h"

namespace rt {

struct EnvSample {
  Vec3 direction;  // towards the environment
  Color radiance;
  float pdf = 0;   // solid angle
};

class Environment {
 public:
  Environment() = default;
  Environment(Color color, RgbImage image, float strength, float rotation_degrees);

  bool is_black() const { return m_black; }
  // The same radiance from every direction (no image).
  bool is_constant() const { return m_image.width == 0; }
  Color eval(Vec3 direction) const;
  EnvSample sample(Vec2 u) const;
  float pdf(Vec3 direction) const;
  // Mean luminance over the sphere, for choosing between light sources.
  float average_luminance() const { return m_average_luminance; }

 private:
  Vec2 direction_to_uv(Vec3 d) const;
  Vec3 uv_to_direction(Vec2 uv) const;

  Color m_color{0.0f};
  RgbImage m_image;
  float m_strength = 1.0f;
  float m_rotation = 0.0f;  // radians about +Y
  bool m_black = true;
  float m_average_luminance = 0.0f;
  // Piecewise-constant 2D distribution over image pixels: row marginal and per-row conditionals.
  std::vector<float> m_row_cdf;   // height + 1
  std::vector<float> m_col_cdf;   // height * (width + 1)
  std::vector<float> m_row_sum;   // unnormalised weight of each row
  float m_total = 0.0f;
};

}  // namespace rt
