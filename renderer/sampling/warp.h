// Maps from uniform [0,1)^2 to distributions the integrators need, with their densities.
#pragma once

#include <cmath>

#include "math/vec.h"

namespace rt {

// Shirley-Chiu concentric map to the unit disk.
inline Vec2 square_to_disk(Vec2 u) {
  float a = 2 * u.x - 1, b = 2 * u.y - 1;
  if (a == 0 && b == 0) return {0, 0};
  float r, phi;
  if (std::fabs(a) > std::fabs(b)) {
    r = a;
    phi = (k_pi / 4) * (b / a);
  } else {
    r = b;
    phi = (k_pi / 2) - (k_pi / 4) * (a / b);
  }
  return {r * std::cos(phi), r * std::sin(phi)};
}

// Cosine-weighted hemisphere around +z; pdf = cos(theta) / pi.
inline Vec3 square_to_cosine_hemisphere(Vec2 u) {
  Vec2 d = square_to_disk(u);
  float z = std::sqrt(std::fmax(0.0f, 1 - d.x * d.x - d.y * d.y));
  return {d.x, d.y, z};
}

inline Vec3 square_to_uniform_sphere(Vec2 u) {
  float z = 1 - 2 * u.x;
  float r = std::sqrt(std::fmax(0.0f, 1 - z * z));
  float phi = 2 * k_pi * u.y;
  return {r * std::cos(phi), r * std::sin(phi), z};
}
constexpr float k_uniform_sphere_pdf = 1.0f / (4.0f * k_pi);

// Uniform direction in the cone of half-angle acos(cos_max) around +z; pdf = 1 / (2 pi (1 - cos_max)).
inline Vec3 square_to_cone(Vec2 u, float cos_max) {
  float z = 1 - u.x * (1 - cos_max);
  float r = std::sqrt(std::fmax(0.0f, 1 - z * z));
  float phi = 2 * k_pi * u.y;
  return {r * std::cos(phi), r * std::sin(phi), z};
}

// Uniform point on a triangle as barycentrics (b1, b2).
inline Vec2 square_to_triangle(Vec2 u) {
  float su = std::sqrt(u.x);
  return {1 - su, u.y * su};
}

inline float power_heuristic(float pdf_a, float pdf_b) {
  float a = pdf_a * pdf_a, b = pdf_b * pdf_b;
  return (a + b) > 0 ? a / (a + b) : 0.0f;
}

}  // namespace rt
