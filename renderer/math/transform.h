// Affine transforms as 3x4 row-major matrices (the last row of a 4x4 is implied 0 0 0 1).
// Named by direction of use, e.g. `world_from_object`, so composition reads right to left.
#pragma once

#include "math/vec.h"

namespace rt {

struct Transform {
  // m[r][c]; column 3 is the translation.
  float m[3][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}};

  Vec3 point(Vec3 p) const {
    return {m[0][0] * p.x + m[0][1] * p.y + m[0][2] * p.z + m[0][3],
            m[1][0] * p.x + m[1][1] * p.y + m[1][2] * p.z + m[1][3],
            m[2][0] * p.x + m[2][1] * p.y + m[2][2] * p.z + m[2][3]};
  }
  Vec3 vector(Vec3 v) const {
    return {m[0][0] * v.x + m[0][1] * v.y + m[0][2] * v.z,
            m[1][0] * v.x + m[1][1] * v.y + m[1][2] * v.z,
            m[2][0] * v.x + m[2][1] * v.y + m[2][2] * v.z};
  }
  bool is_identity() const;
};

Transform operator*(const Transform& a, const Transform& b);  // apply b, then a
Transform inverse(const Transform& t);                          // throws std::domain_error if singular
Transform translate(Vec3 d);
Transform scale(Vec3 s);
Transform rotate_degrees(Vec3 axis, float degrees);
// Normals transform by the inverse transpose; returns the normalised result.
Vec3 transform_normal(const Transform& world_from_object, Vec3 n);

}  // namespace rt
