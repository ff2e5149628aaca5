#include "shading/environment.h"

#include <algorithm>
#include <cmath>

namespace rt {

namespace {
// Index of the interval of `cdf` (size n+1, cdf[0]=0, cdf[n]=1) containing u.
int find_interval(const float* cdf, int n, float u) {
  const float* it = std::upper_bound(cdf, cdf + n + 1, u);
  int i = static_cast<int>(it - cdf) - 1;
  return std::clamp(i, 0, n - 1);
}
}  // namespace

Environment::Environment(Color color, RgbImage image, float strength, float rotation_degrees)
    : m_color(color), m_image(std::move(image)), m_strength(strength), m_rotation(rotation_degrees * k_pi / 180.0f) {
  if (m_image.width == 0) {
    m_black = rt::is_black(m_color * m_strength);
    m_average_luminance = luminance(m_color * m_strength);
    return;
  }
  const int w = m_image.width, h = m_image.height;
  m_row_cdf.assign(h + 1, 0.0f);
  m_col_cdf.assign(static_cast<size_t>(h) * (w + 1), 0.0f);
  m_row_sum.assign(h, 0.0f);
  double total = 0, lum_total = 0;
  for (int y = 0; y < h; ++y) {
    float sin_theta = std::sin(k_pi * (y + 0.5f) / h);
    float* cdf = &m_col_cdf[static_cast<size_t>(y) * (w + 1)];
    double row = 0;
    for (int x = 0; x < w; ++x) {
      float lum = luminance(m_image.at(x, y)) * m_strength;
      lum_total += lum * sin_theta;
      row += std::max(lum, 0.0f) * sin_theta;
      cdf[x + 1] = static_cast<float>(row);
    }
    for (int x = 1; x <= w; ++x) cdf[x] = row > 0 ? static_cast<float>(cdf[x] / row) : static_cast<float>(x) / w;
    m_row_sum[y] = static_cast<float>(row);
    total += row;
    m_row_cdf[y + 1] = static_cast<float>(total);
  }
  for (int y = 1; y <= h; ++y) m_row_cdf[y] = total > 0 ? static_cast<float>(m_row_cdf[y] / total) : static_cast<float>(y) / h;
  m_total = static_cast<float>(total);
  m_black = !(total > 0);
  // Mean over the sphere: sum(L sin(theta)) * (2pi/w)(pi/h) / 4pi.
  m_average_luminance = static_cast<float>(lum_total * (2 * k_pi / w) * (k_pi / h) / (4 * k_pi));
}

Vec2 Environment::direction_to_uv(Vec3 d) const {
  float phi = std::atan2(d.x, -d.z) - m_rotation;
  float u = phi / (2 * k_pi);
  u -= std::floor(u);
  float v = std::acos(std::clamp(d.y, -1.0f, 1.0f)) * k_inv_pi;
  return {u, v};
}

Vec3 Environment::uv_to_direction(Vec2 uv) const {
  float phi = uv.x * 2 * k_pi + m_rotation;
  float theta = uv.y * k_pi;
  float s = std::sin(theta);
  return {s * std::sin(phi), std::cos(theta), -s * std::cos(phi)};
}

Color Environment::eval(Vec3 d) const {
  if (m_image.width == 0) return m_color * m_strength;
  Vec2 uv = direction_to_uv(d);
  int x = std::min(static_cast<int>(uv.x * m_image.width), m_image.width - 1);
  int y = std::min(static_cast<int>(uv.y * m_image.height), m_image.height - 1);
  return m_image.at(x, y) * m_strength;
}

EnvSample Environment::sample(Vec2 u) const {
  EnvSample s;
  if (m_image.width == 0) {
    s.direction = square_to_uniform_sphere(u);
    s.radiance = m_color * m_strength;
    s.pdf = 1.0f / (4 * k_pi);
    return s;
  }
  const int w = m_image.width, h = m_image.height;
  int y = find_interval(m_row_cdf.data(), h, u.y);
  const float* cdf = &m_col_cdf[static_cast<size_t>(y) * (w + 1)];
  int x = find_interval(cdf, w, u.x);
  // Continuous position inside the chosen pixel.
  float dy = (u.y - m_row_cdf[y]) / std::max(m_row_cdf[y + 1] - m_row_cdf[y], 1e-12f);
  float dx = (u.x - cdf[x]) / std::max(cdf[x + 1] - cdf[x], 1e-12f);
  Vec2 uv{(x + std::clamp(dx, 0.0f, 0.999f)) / w, (y + std::clamp(dy, 0.0f, 0.999f)) / h};
  s.direction = uv_to_direction(uv);
  s.radiance = m_image.at(x, y) * m_strength;
  s.pdf = pdf(s.direction);
  return s;
}

float Environment::pdf(Vec3 d) const {
  if (m_black) return 0.0f;
  if (m_image.width == 0) return 1.0f / (4 * k_pi);
  Vec2 uv = direction_to_uv(d);
  const int w = m_image.width, h = m_image.height;
  int x = std::min(static_cast<int>(uv.x * w), w - 1);
  int y = std::min(static_cast<int>(uv.y * h), h - 1);
  float sin_theta = std::sin(k_pi * (y + 0.5f) / h);
  if (sin_theta <= 0 || m_total <= 0) return 0.0f;
  float lum = std::max(luminance(m_image.at(x, y)) * m_strength, 0.0f);
  float pdf_uv = lum * sin_theta / m_total * (static_cast<float>(w) * h);  // density over the unit square
  // Jacobian of the lat-long map at the direction itself: d(omega) = 2 pi^2 sin(theta) du dv.
  float sin_dir = std::sqrt(std::max(0.0f, 1 - d.y * d.y));
  return sin_dir > 1e-6f ? pdf_uv / (2 * k_pi * k_pi * sin_dir) : 0.0f;
}

}  // namespace rt
