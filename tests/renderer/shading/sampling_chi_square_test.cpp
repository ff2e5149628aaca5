// Chi-square tests of the direction samplers against their densities (tests/renderer/chi_square.h),
// as Nori's and pbrt's tests do: every glossy and diffuse BSDF lobe for several views and
// roughnesses, the environment's importance sampling, and sphere and triangle emitters. A
// sampler that reports the right pdf for the directions it draws, but draws them from another
// distribution, passes the pointwise checks of bsdf_test.cpp and fails here.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "renderer/chi_square.h"
#include "shading/bsdf.h"
#include "shading/environment.h"
#include "shading/lights.h"

TEST_SUITE_BEGIN("unit");

using namespace rt;

namespace {

constexpr int k_samples = 100000;
// 0.01 over all the tests of this file together (Sidak): each must reach this p-value.
constexpr int k_tests = 26;
const double k_alpha = 1 - std::pow(1 - 0.01, 1.0 / k_tests);
// An emitter's density stops at its outline: bins it crosses are integrated on a finer grid.
constexpr int k_edge_grid = 96;

Vec3 direction(float theta, float phi) {
  return {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)};
}

struct Uniform {
  std::mt19937 rng;
  std::uniform_real_distribution<float> u01{0.0f, 1.0f};
  explicit Uniform(unsigned seed) : rng(seed) {}
  float operator()() { return u01(rng); }
};

// The first hit of the ray p + t d (t > 0) on the sphere, or nothing.
std::optional<Vec3> hit_sphere(Vec3 p, Vec3 d, Vec3 c, float r) {
  const Vec3 oc = p - c;
  const float b = dot(oc, d), disc = b * b - (dot(oc, oc) - r * r);
  if (disc < 0) return std::nullopt;
  const float t = -b - std::sqrt(disc);
  if (t <= 0) return std::nullopt;
  return p + d * t;
}

// Moeller-Trumbore.
std::optional<Vec3> hit_triangle(Vec3 p, Vec3 d, Vec3 a, Vec3 b, Vec3 c) {
  const Vec3 e1 = b - a, e2 = c - a, q = cross(d, e2);
  const float det = dot(e1, q);
  if (std::fabs(det) < 1e-12f) return std::nullopt;
  const Vec3 s = p - a;
  const float u = dot(s, q) / det;
  if (u < 0 || u > 1) return std::nullopt;
  const Vec3 r = cross(s, e1);
  const float v = dot(d, r) / det;
  if (v < 0 || u + v > 1) return std::nullopt;
  const float t = dot(e2, r) / det;
  if (t <= 0) return std::nullopt;
  return p + d * t;
}

// Directions towards `lights` from `p`, as the integrators draw them (nothing where pdf is 0).
std::function<std::optional<Vec3>(int)> light_directions(const LightSet& lights, Vec3 p, Uniform& u) {
  return [&lights, p, &u](int) -> std::optional<Vec3> {
    const float select = u();
    const LightSample s = lights.sample(p, select, Vec2{u(), u()});
    if (!(s.pdf > 0)) return std::nullopt;
    return s.wi;
  };
}

void check(const chi_square::Result& r) {
  INFO(r.describe());
  CHECK(r.p_value >= k_alpha);
}

}  // namespace

TEST_CASE("chi-square: every diffuse and glossy BSDF lobe draws its directions from the pdf it reports") {
  const Vec3 n = normalize(Vec3{0.2f, -0.1f, 1.0f});  // not the z axis: the frame is exercised too
  const Frame frame(n);
  unsigned seed = 1;
  int tests = 0;
  for (MaterialKind kind : {MaterialKind::diffuse, MaterialKind::plastic, MaterialKind::metal}) {
    for (float roughness : {0.3f, 0.6f, 1.0f}) {
      if (kind == MaterialKind::diffuse && roughness != 1.0f) continue;
      for (float theta : {0.2f, 0.9f, 1.35f}) {
        BsdfParams p;
        p.kind = kind;
        p.albedo = Color{0.7f, 0.5f, 0.3f};
        p.roughness = roughness;
        const Bsdf bsdf(p, n, true);
        const Vec3 wo = frame.to_world(direction(theta, 0.7f));
        CAPTURE(static_cast<int>(kind));
        CAPTURE(roughness);
        CAPTURE(theta);
        Uniform u(seed++);
        const chi_square::Result r = chi_square::test(
            k_samples,
            [&](int) -> std::optional<Vec3> {
              const float lobe = u();
              const Vec2 uv{u(), u()};
              const std::optional<BsdfSample> s = bsdf.sample(wo, lobe, uv);
              if (!s || !(s->pdf > 0)) return std::nullopt;
              return s->wi;
            },
            [&](Vec3 wi) { return bsdf.pdf(wo, wi); });
        check(r);
        ++tests;
      }
    }
  }
  CHECK(tests == 21);
}

TEST_CASE("chi-square: the environment's importance sampling draws from its pdf, rotated or not") {
  // A sky with a bright sun, a dark ground and a gradient: far from uniform.
  RgbImage image;
  image.width = 32;
  image.height = 16;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) {
      float v = y < image.height / 2 ? 0.2f + 0.1f * static_cast<float>(x) / image.width : 0.02f;
      if (x >= 20 && x <= 21 && y >= 3 && y <= 4) v = 40.0f;
      image.pixels.push_back(Color{v, v * 0.9f, v * 0.8f});
    }
  unsigned seed = 100;
  for (float rotation : {0.0f, 70.0f}) {
    CAPTURE(rotation);
    const Environment env(Color{0.0f}, image, 1.0f, rotation);
    Uniform u(seed++);
    check(chi_square::test(
        k_samples,
        [&](int) -> std::optional<Vec3> {
          const EnvSample s = env.sample(Vec2{u(), u()});
          if (!(s.pdf > 0)) return std::nullopt;
          return s.direction;
        },
        [&](Vec3 d) { return env.pdf(d); }));
  }
}

TEST_CASE("chi-square: sphere and triangle emitters are sampled by the density MIS reads back (pdf_hit)") {
  const Vec3 p{0.1f, -0.2f, 0.0f};
  {
    LightSet lights;
    const Vec3 c{0.8f, 0.3f, 2.0f};
    const float r = 1.2f;
    const int index = lights.add_sphere(c, r, Color{5.0f});
    lights.finalize(10.0f);
    Uniform u(200);
    check(chi_square::test(
        k_samples,
        light_directions(lights, p, u),
        [&](Vec3 d) -> double {
          const std::optional<Vec3> y = hit_sphere(p, d, c, r);
          return y ? lights.pdf_hit(index, p, *y, normalize(*y - c)) : 0.0;
        },
        k_edge_grid));
  }
  {
    LightSet lights;
    const Vec3 a{-1.0f, -0.5f, 1.5f}, b{1.5f, -0.8f, 1.0f}, c{0.2f, 1.4f, 1.8f};
    const int index = lights.add_triangle(a, b, c, Color{5.0f}, /*two_sided=*/true);
    lights.finalize(10.0f);
    const Vec3 normal = normalize(cross(b - a, c - a));
    Uniform u(201);
    check(chi_square::test(
        k_samples,
        light_directions(lights, p, u),
        [&](Vec3 d) -> double {
          const std::optional<Vec3> y = hit_triangle(p, d, a, b, c);
          return y ? lights.pdf_hit(index, p, *y, normal) : 0.0;
        },
        k_edge_grid));
  }
}

TEST_CASE("chi-square: the test itself rejects a sampler whose distribution is not its pdf") {
  // Cosine-weighted directions reported as uniform over the hemisphere: pointwise nothing is
  // checked, and the statistic must see it.
  Uniform u(300);
  const chi_square::Result wrong = chi_square::test(
      k_samples,
      [&](int) -> std::optional<Vec3> {
        const float r = std::sqrt(u()), phi = 2 * k_pi * u();
        return Vec3{r * std::cos(phi), r * std::sin(phi), std::sqrt(std::max(0.0f, 1 - r * r))};
      },
      [](Vec3 d) { return d.z > 0 ? 1.0 / (2 * M_PI) : 0.0; });
  CHECK(wrong.p_value < 1e-9);
  CHECK(chi_square::gamma_q(1.0, 2.0) == doctest::Approx(std::exp(-2.0)).epsilon(1e-9));  // Q(1, x) = e^-x
  CHECK(chi_square::gamma_q(5.0, 4.0) == doctest::Approx(0.6288369351).epsilon(1e-7));    // chi2(10 dof) at 8
}

TEST_SUITE_END();
