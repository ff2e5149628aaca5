// The surface scattering models (shading/bsdf.h) on their own: sampling agrees with eval and pdf,
// reflection is reciprocal, no lobe reflects more than arrives, and the delta lobes go where the
// laws of reflection and refraction say.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "shading/bsdf.h"

TEST_SUITE_BEGIN("unit");

using namespace rt;

namespace {

BsdfParams params(MaterialKind kind, float roughness = 0.3f) {
  BsdfParams p;
  p.kind = kind;
  p.albedo = Color{0.7f, 0.5f, 0.3f};
  p.roughness = roughness;
  return p;
}

Vec3 direction(float theta, float phi) {
  return {std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi), std::cos(theta)};
}

}  // namespace

TEST_CASE("bsdf: a sample's weight and pdf are eval and pdf of its direction, for every glossy and diffuse lobe") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  const Vec3 n = normalize(Vec3{0.2f, -0.1f, 1.0f});  // not the z axis: the frame is exercised too
  for (MaterialKind kind : {MaterialKind::diffuse, MaterialKind::plastic, MaterialKind::metal}) {
    CAPTURE(static_cast<int>(kind));
    const Bsdf bsdf(params(kind), n, true);
    const Frame frame(n);
    int samples = 0;
    for (int i = 0; i < 2000; ++i) {
      const Vec3 wo = frame.to_world(direction(u01(rng) * 1.4f, u01(rng) * 6.28f));
      const std::optional<BsdfSample> s = bsdf.sample(wo, u01(rng), Vec2{u01(rng), u01(rng)});
      if (!s) continue;
      ++samples;
      REQUIRE(s->pdf > 0);
      CHECK_FALSE(s->is_delta);
      CHECK(s->pdf == doctest::Approx(bsdf.pdf(wo, s->wi)).epsilon(1e-4));
      const Color expected = bsdf.eval(wo, s->wi) / s->pdf;
      CHECK(s->weight.x == doctest::Approx(expected.x).epsilon(1e-4));
      CHECK(s->weight.z == doctest::Approx(expected.z).epsilon(1e-4));
      CHECK(dot(s->wi, n) > 0);  // reflection stays above the surface
    }
    CHECK(samples > 1500);
  }
}

TEST_CASE("bsdf: Lambert is albedo / pi times the cosine, and diffuse and metal are reciprocal") {
  const Vec3 n{0, 0, 1};
  const Bsdf lambert(params(MaterialKind::diffuse), n, true);
  const Vec3 wo = direction(0.3f, 0.1f), wi = direction(1.1f, 2.0f);
  const Color f = lambert.eval(wo, wi);
  CHECK(f.x == doctest::Approx(0.7f / k_pi * std::cos(1.1f)).epsilon(1e-5));
  CHECK(lambert.eval(wo, Vec3{0, 0, -1}) == Color{0.0f});  // nothing below the surface
  for (MaterialKind kind : {MaterialKind::diffuse, MaterialKind::metal}) {
    const Bsdf bsdf(params(kind), n, true);
    // eval holds the cosine of wi: f(wo, wi) = eval / cos_i must equal f(wi, wo).
    const float a = bsdf.eval(wo, wi).y / wi.z, b = bsdf.eval(wi, wo).y / wo.z;
    CHECK(a == doctest::Approx(b).epsilon(1e-4));
  }
}

TEST_CASE("bsdf: no lobe reflects more than arrives (directional albedo <= 1 for every view)") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  const Vec3 n{0, 0, 1};
  for (MaterialKind kind : {MaterialKind::diffuse, MaterialKind::plastic, MaterialKind::metal}) {
    for (float roughness : {0.05f, 0.3f, 1.0f}) {
      BsdfParams p = params(kind, roughness);
      p.albedo = Color{1.0f};  // the worst case: white
      const Bsdf bsdf(p, n, true);
      for (float theta : {0.0f, 0.8f, 1.4f}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(roughness);
        CAPTURE(theta);
        const Vec3 wo = direction(theta, 0.4f);
        double sum = 0;
        const int count = 20000;
        for (int i = 0; i < count; ++i) {
          if (auto s = bsdf.sample(wo, u01(rng), Vec2{u01(rng), u01(rng)})) sum += s->weight.y;
        }
        CHECK(sum / count <= 1.02);  // Monte Carlo: 2% for the noise of 20000 samples
      }
    }
  }
}

TEST_CASE("bsdf: a mirror reflects about the normal, glass refracts by Snell's law and reflects totally inside") {
  const Vec3 n{0, 0, 1};
  const Bsdf mirror(params(MaterialKind::mirror), n, true);
  const Vec3 wo = direction(0.6f, 1.0f);
  const std::optional<BsdfSample> m = mirror.sample(wo, 0.5f, Vec2{0.5f, 0.5f});
  REQUIRE(m);
  CHECK(m->is_delta);
  CHECK(m->wi.x == doctest::Approx(-wo.x));
  CHECK(m->wi.y == doctest::Approx(-wo.y));
  CHECK(m->wi.z == doctest::Approx(wo.z));
  CHECK(mirror.is_delta());

  // Normal incidence on glass of index 1.5 reflects ((1.5 - 1) / (1.5 + 1))^2 = 4%.
  CHECK(fresnel_dielectric(1.0f, 1.5f) == doctest::Approx(0.04f).epsilon(1e-4));
  BsdfParams glass_params = params(MaterialKind::glass);
  glass_params.ior = 1.5f;
  const Bsdf entering(glass_params, n, true);
  const float theta_i = 0.7f;
  const std::optional<BsdfSample> t = entering.sample(direction(theta_i, 0.0f), 0.99f, Vec2{0, 0});
  REQUIRE(t);
  CHECK(t->lobe == Lobe::specular_transmission);
  const float sin_t = std::sqrt(t->wi.x * t->wi.x + t->wi.y * t->wi.y);
  CHECK(std::sin(theta_i) == doctest::Approx(1.5f * sin_t).epsilon(1e-4));  // n1 sin i = n2 sin t
  CHECK(t->wi.z < 0);
  // From inside, beyond the critical angle (asin(1/1.5) = 41.8 degrees), everything reflects.
  const Bsdf leaving(glass_params, n, false);
  const std::optional<BsdfSample> r = leaving.sample(direction(1.0f, 0.0f), 0.99f, Vec2{0, 0});
  REQUIRE(r);
  CHECK(r->lobe == Lobe::specular_reflection);
  CHECK(fresnel_dielectric(std::cos(1.0f), 1.0f / 1.5f) == doctest::Approx(1.0f));

  const Bsdf light(params(MaterialKind::emissive), n, true);
  CHECK(light.is_absorbing());
  CHECK_FALSE(light.sample(wo, 0.5f, Vec2{0.5f, 0.5f}));
}

TEST_SUITE_END();
