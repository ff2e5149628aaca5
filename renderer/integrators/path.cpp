#include <array>
#include <cmath>

#include "integrators/integrator.h"
#include "integrators/shading_point.h"
#include "sampling/warp.h"
#include "shading/bsdf.h"

namespace rt {

namespace {

// Light sampling half of next-event estimation, MIS-weighted against BSDF sampling.
Color sample_direct(const Tracer& tracer, const Bsdf& bsdf, Vec3 p, Vec3 ng, Vec3 wo, float u_select, Vec2 u,
                    RayCounts& counts) {
  const LightSet& lights = tracer.scene().lights;
  if (lights.empty() || bsdf.is_delta()) return Color{0.0f};
  auto contribution = [&](const LightSample& s) {
    if (!(s.pdf > 0) || is_black(s.radiance) || dot(s.wi, ng) <= 0) return Color{0.0f};
    Color f = bsdf.eval(wo, s.wi);
    if (is_black(f)) return Color{0.0f};
    ++counts.shadow;
    float t_max = std::isinf(s.distance) ? k_ray_infinity : s.distance * (1 - 1e-4f);
    if (tracer.occluded(offset_origin(p, ng, s.wi), s.wi, t_max)) return Color{0.0f};
    float weight = s.is_delta ? 1.0f : power_heuristic(s.pdf, bsdf.pdf(wo, s.wi));
    return f * s.radiance * (weight / s.pdf);
  };
  Color sum{0.0f};
  for (const LightDesc& d : lights.deltas_sampled_apart()) sum += contribution(LightSet::sample_delta(d, p));
  return sum + contribution(lights.sample(p, u_select, u));
}

}  // namespace

Color trace_path(const Tracer& tracer, const Ray& camera_ray, const SurfaceHit* first_hit, PixelSampler& sampler,
                 RayCounts& counts) {
  const Scene& scene = tracer.scene();
  const int max_depth = scene.desc.settings.max_depth;
  Color radiance{0.0f}, throughput{1.0f};
  Ray ray = camera_ray;
  bool specular_bounce = true;  // camera rays and delta bounces see emitters unweighted
  float prev_bsdf_pdf = 0;
  Vec3 prev_p;
  // Without emitters or a sky, the ray after the last light-sampled hit can find nothing.
  const bool last_ray_useless = !scene.has_emission;

  for (int depth = 0;; ++depth) {
    SurfaceHit hit;
    const bool found = depth == 0 ? first_hit != nullptr : tracer.intersect(ray, k_ray_infinity, hit);
    if (depth == 0 && found) hit = *first_hit;
    if (!found) {
      Color le = scene.environment.eval(ray.direction);
      if (!is_black(le)) {
        float w = specular_bounce ? 1.0f : power_heuristic(prev_bsdf_pdf, scene.lights.pdf_environment(ray.direction));
        radiance += throughput * le * w;
      }
      break;
    }
    const MaterialDesc& mat = material_of(scene, hit.material);
    Vec3 wo = -ray.direction;
    const ShadingPoint sp = shade(scene, mat, hit);
    if (has_emission(mat)) {
      Color le = emitted_towards(sp, hit.ng, wo);
      if (!is_black(le)) {
        float w = 1.0f;
        if (!specular_bounce && hit.light >= 0) {
          w = power_heuristic(prev_bsdf_pdf, scene.lights.pdf_hit(hit.light, prev_p, hit.p, hit.ng));
        }
        radiance += throughput * le * w;
      }
    }
    if (mat.kind == MaterialKind::emissive) break;  // pure emitters do not reflect
    if (depth >= max_depth) break;

    Vec3 n = hit.front ? sp.ns : -sp.ns;
    Vec3 ng = hit.front ? hit.ng : -hit.ng;
    Bsdf bsdf(sp.bsdf, n, hit.front);
    // Two sample slots per vertex: (light point x, y, light choice, BSDF lobe) and (BSDF
    // direction x, y, Russian roulette). The 2D warps get each slot's (0,2)-net pair.
    const std::array<float, 4> u_light = sampler.next4();
    const std::array<float, 4> u_bsdf = sampler.next4();
    radiance += throughput * sample_direct(tracer, bsdf, hit.p, ng, wo, u_light[2], {u_light[0], u_light[1]}, counts);
    if (last_ray_useless && depth + 1 >= max_depth) break;

    auto bs = bsdf.sample(wo, u_light[3], {u_bsdf[0], u_bsdf[1]});
    if (!bs) break;
    throughput *= bs->weight;
    if (is_black(throughput) || !is_finite(throughput)) break;
    specular_bounce = bs->is_delta;
    prev_bsdf_pdf = bs->pdf;
    prev_p = hit.p;
    if (bs->lobe == Lobe::specular_reflection) ++counts.reflected;
    else if (bs->lobe == Lobe::specular_transmission) ++counts.refracted;
    else ++counts.indirect;
    ray = {offset_origin(hit.p, ng, bs->wi), bs->wi};

    // Russian roulette after a few bounces, keeping the estimate unbiased.
    if (depth >= 3) {
      float q = std::fmin(0.95f, max_component(throughput));
      if (u_bsdf[2] >= q) break;
      throughput *= 1.0f / q;
    }
  }
  float clamp_value = scene.desc.settings.max_sample_value;
  if (clamp_value > 0) radiance = min(radiance, Color{clamp_value});
  return radiance;
}

}  // namespace rt
