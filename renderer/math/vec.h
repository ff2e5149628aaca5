// Small value types for the renderer: 3-vectors, colours, and 2-vectors.
// Plain structs with free functions (no SIMD wrappers): Embree does the heavy
// lifting, and plain code keeps every pixel's arithmetic identical across tilings.
#pragma once

#include <algorithm>
#include <cmath>

namespace rt {

constexpr float k_pi = 3.14159265358979323846f;
constexpr float k_inv_pi = 1.0f / k_pi;

struct Vec2 {
  float x = 0, y = 0;
};
inline Vec2 operator+(Vec2 a, Vec2 b) { return {a.x + b.x, a.y + b.y}; }
inline Vec2 operator-(Vec2 a, Vec2 b) { return {a.x - b.x, a.y - b.y}; }
inline Vec2 operator*(Vec2 a, float s) { return {a.x * s, a.y * s}; }

struct Vec3 {
  float x = 0, y = 0, z = 0;
  constexpr Vec3() = default;
  constexpr Vec3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}
  constexpr explicit Vec3(float s) : x(s), y(s), z(s) {}
  float operator[](int i) const { return i == 0 ? x : (i == 1 ? y : z); }
  float& operator[](int i) { return i == 0 ? x : (i == 1 ? y : z); }
};

// Colours share the vector type; the alias documents intent at call sites.
using Color = Vec3;

inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
inline Vec3 operator*(Vec3 a, Vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
inline Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline Vec3 operator*(float s, Vec3 a) { return a * s; }
inline Vec3 operator/(Vec3 a, float s) { return a * (1.0f / s); }
inline Vec3 operator/(Vec3 a, Vec3 b) { return {a.x / b.x, a.y / b.y, a.z / b.z}; }
inline Vec3& operator+=(Vec3& a, Vec3 b) { return a = a + b; }
inline Vec3& operator-=(Vec3& a, Vec3 b) { return a = a - b; }
inline Vec3& operator*=(Vec3& a, Vec3 b) { return a = a * b; }
inline Vec3& operator*=(Vec3& a, float s) { return a = a * s; }
inline bool operator==(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
inline bool operator!=(Vec3 a, Vec3 b) { return !(a == b); }

inline float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float length(Vec3 a) { return std::sqrt(dot(a, a)); }
inline float length_squared(Vec3 a) { return dot(a, a); }
inline Vec3 normalize(Vec3 a) {
  float len = length(a);
  return len > 0 ? a / len : Vec3{0, 0, 1};
}
inline Vec3 lerp(Vec3 a, Vec3 b, float t) { return a * (1 - t) + b * t; }
inline Vec3 min(Vec3 a, Vec3 b) { return {std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)}; }
inline Vec3 max(Vec3 a, Vec3 b) { return {std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)}; }
inline float max_component(Vec3 a) { return std::max(a.x, std::max(a.y, a.z)); }
inline float luminance(Color c) { return 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z; }
inline bool is_black(Color c) { return c.x <= 0 && c.y <= 0 && c.z <= 0; }
inline bool is_finite(Vec3 a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }

inline Vec3 reflect(Vec3 wo, Vec3 n) { return 2.0f * dot(wo, n) * n - wo; }

// Orthonormal basis around n (Duff et al. 2017, "Building an orthonormal basis, revisited").
struct Frame {
  Vec3 s, t, n;
  explicit Frame(Vec3 normal) : n(normal) {
    float sign = std::copysign(1.0f, n.z);
    float a = -1.0f / (sign + n.z);
    float b = n.x * n.y * a;
    s = {1.0f + sign * n.x * n.x * a, sign * b, -sign * n.x};
    t = {b, sign + n.y * n.y * a, -n.y};
  }
  Vec3 to_local(Vec3 v) const { return {dot(v, s), dot(v, t), dot(v, n)}; }
  Vec3 to_world(Vec3 v) const { return s * v.x + t * v.y + n * v.z; }
};

}  // namespace rt
