#include "math/transform.h"

#include <stdexcept>

namespace rt {

bool Transform::is_identity() const {
  const Transform id;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c)
      if (m[r][c] != id.m[r][c]) return false;
  return true;
}

Transform operator*(const Transform& a, const Transform& b) {
  Transform out;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      float v = a.m[r][0] * b.m[0][c] + a.m[r][1] * b.m[1][c] + a.m[r][2] * b.m[2][c];
      if (c == 3) v += a.m[r][3];
      out.m[r][c] = v;
    }
  }
  return out;
}

Transform inverse(const Transform& t) {
  const auto& m = t.m;
  // Inverse of the 3x3 linear part by cofactors (double for headroom), then -A^-1 * b.
  double a00 = m[1][1] * m[2][2] - m[1][2] * m[2][1];
  double a01 = m[0][2] * m[2][1] - m[0][1] * m[2][2];
  double a02 = m[0][1] * m[1][2] - m[0][2] * m[1][1];
  double a10 = m[1][2] * m[2][0] - m[1][0] * m[2][2];
  double a11 = m[0][0] * m[2][2] - m[0][2] * m[2][0];
  double a12 = m[0][2] * m[1][0] - m[0][0] * m[1][2];
  double a20 = m[1][0] * m[2][1] - m[1][1] * m[2][0];
  double a21 = m[0][1] * m[2][0] - m[0][0] * m[2][1];
  double a22 = m[0][0] * m[1][1] - m[0][1] * m[1][0];
  double det = m[0][0] * a00 + m[0][1] * a10 + m[0][2] * a20;
  if (!(std::abs(det) > 1e-20)) throw std::domain_error("transform is singular (a scale of 0?)");
  double inv = 1.0 / det;
  Transform out;
  double a[3][3] = {{a00, a01, a02}, {a10, a11, a12}, {a20, a21, a22}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out.m[r][c] = static_cast<float>(a[r][c] * inv);
  for (int r = 0; r < 3; ++r) {
    out.m[r][3] = -(out.m[r][0] * m[0][3] + out.m[r][1] * m[1][3] + out.m[r][2] * m[2][3]);
  }
  return out;
}

Transform translate(Vec3 d) {
  Transform t;
  t.m[0][3] = d.x;
  t.m[1][3] = d.y;
  t.m[2][3] = d.z;
  return t;
}

Transform scale(Vec3 s) {
  Transform t;
  t.m[0][0] = s.x;
  t.m[1][1] = s.y;
  t.m[2][2] = s.z;
  return t;
}

Transform rotate_degrees(Vec3 axis, float degrees) {
  Vec3 a = normalize(axis);
  float rad = degrees * k_pi / 180.0f;
  float s = std::sin(rad), c = std::cos(rad), k = 1 - c;
  Transform t;
  t.m[0][0] = a.x * a.x * k + c;
  t.m[0][1] = a.x * a.y * k - a.z * s;
  t.m[0][2] = a.x * a.z * k + a.y * s;
  t.m[1][0] = a.y * a.x * k + a.z * s;
  t.m[1][1] = a.y * a.y * k + c;
  t.m[1][2] = a.y * a.z * k - a.x * s;
  t.m[2][0] = a.z * a.x * k - a.y * s;
  t.m[2][1] = a.z * a.y * k + a.x * s;
  t.m[2][2] = a.z * a.z * k + c;
  return t;
}

Vec3 transform_normal(const Transform& world_from_object, Vec3 n) {
  Transform inv = inverse(world_from_object);
  // (A^-1)^T * n
  return normalize({inv.m[0][0] * n.x + inv.m[1][0] * n.y + inv.m[2][0] * n.z,
                    inv.m[0][1] * n.x + inv.m[1][1] * n.y + inv.m[2][1] * n.z,
                    inv.m[0][2] * n.x + inv.m[1][2] * n.y + inv.m[2][2] * n.z});
}

}  // namespace rt
