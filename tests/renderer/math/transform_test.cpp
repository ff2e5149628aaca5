// Affine transforms (math/transform.h): composition order, inverses, and normals under
// non-uniform scale.
#include <doctest/doctest.h>

#include <stdexcept>

#include "math/transform.h"

TEST_SUITE_BEGIN("unit");

using namespace rt;

namespace {

void check_near(Vec3 a, Vec3 b) {
  CHECK(a.x == doctest::Approx(b.x).epsilon(1e-5));
  CHECK(a.y == doctest::Approx(b.y).epsilon(1e-5));
  CHECK(a.z == doctest::Approx(b.z).epsilon(1e-5));
}

}  // namespace

TEST_CASE("transform: composition applies the right-hand transform first, and rotation is right-handed") {
  CHECK(Transform{}.is_identity());
  check_near(rotate_degrees({0, 0, 1}, 90).vector({1, 0, 0}), {0, 1, 0});
  const Transform t = translate({1, 2, 3}) * scale({2, 2, 2});  // scale, then move
  check_near(t.point({1, 1, 1}), {3, 4, 5});
  check_near(t.vector({1, 1, 1}), {2, 2, 2});  // vectors ignore the translation
  const Transform u = scale({2, 2, 2}) * translate({1, 2, 3});  // move, then scale
  check_near(u.point({1, 1, 1}), {4, 6, 8});
  CHECK_FALSE(t.is_identity());
}

TEST_CASE("transform: an inverse undoes the transform, and a singular one is refused") {
  const Transform t = translate({0.5f, -3, 2}) * rotate_degrees(normalize(Vec3{1, 1, 0}), 33) * scale({1, 4, 0.25f});
  const Transform back = inverse(t);
  for (Vec3 p : {Vec3{0, 0, 0}, Vec3{1, -2, 3}, Vec3{-7, 0.5f, 2}}) check_near(back.point(t.point(p)), p);
  const Transform round = inverse(t) * t;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) CHECK(round.m[r][c] == doctest::Approx(r == c ? 1.0f : 0.0f).epsilon(1e-5));
  CHECK_THROWS_AS(inverse(scale({1, 0, 1})), std::domain_error);
}

TEST_CASE("transform: normals stay perpendicular to the surface under non-uniform scale") {
  const Transform t = rotate_degrees({0, 1, 0}, 20) * scale({1, 5, 0.5f});
  const Vec3 n = normalize(Vec3{1, 1, 0});
  const Vec3 tangent{1, -1, 0};  // lies in the surface: dot(n, tangent) = 0
  const Vec3 n_world = transform_normal(t, n);
  CHECK(length(n_world) == doctest::Approx(1.0f));
  CHECK(dot(n_world, t.vector(tangent)) == doctest::Approx(0.0f).epsilon(1e-5));
  // Transforming the normal as a vector would tilt it off the surface.
  CHECK(std::fabs(dot(normalize(t.vector(n)), normalize(t.vector(tangent)))) > 0.1f);
}

TEST_SUITE_END();
