#include <cmath>
#include <optional>

#include "integrators/integrator.h"
#include "integrators/shading_point.h"
#include "shading/bsdf.h"

namespace rt {

namespace {

// POV-Ray's adc_bailout: stop recursing once a branch can change the pixel by < 1/255.
constexpr float k_bailout = 1.0f / 255.0f;

class Whitted {
 public:
  Whitted(const Tracer& tracer, PixelSampler& sampler, RayCounts& counts)
      : m_tracer(tracer), m_scene(tracer.scene()), m_sampler(sampler), m_counts(counts) {}

  Color trace(const Ray& ray, int depth, float weight) {
    SurfaceHit hit;
    if (!m_tracer.intersect(ray, k_ray_infinity, hit)) return m_scene.environment.eval(ray.direction);
    return shade_hit(ray, hit, depth, weight);
  }

  Color shade_hit(const Ray& ray, const SurfaceHit& hit, int depth, float weight) {
    const MaterialDesc& mat = material_of(m_scene, hit.material);
    Vec3 wo = -ray.direction;
    const ShadingPoint sp = rt::shade(m_scene, mat, hit);
    Color result = emitted_towards(sp, hit.ng, wo);
    if (mat.kind == MaterialKind::emissive) return result;

    Vec3 n = hit.front ? sp.ns : -sp.ns;  // face the viewer
    Vec3 ng = hit.front ? hit.ng : -hit.ng;
    Color albedo = sp.bsdf.albedo;
    const MaterialKind kind = sp.bsdf.kind;
    const bool is_delta = kind == MaterialKind::mirror || kind == MaterialKind::glass;
    if (!is_delta) result += m_scene.desc.settings.ambient * albedo;
    const bool lit = !m_scene.lights.delta_lights().empty() || m_scene.lights.has_area_lights();
    const bool coated = kind == MaterialKind::plastic || kind == MaterialKind::metal;
    // The BSDF is only needed for direct light and for the Fresnel term of coated materials.
    std::optional<Bsdf> bsdf;
    if ((!is_delta && lit) || coated) bsdf.emplace(sp.bsdf, n, hit.front);
    if (!is_delta && lit) result += direct_light(*bsdf, hit.p, ng, wo);
    if (depth >= m_scene.desc.settings.max_depth) return result;

    switch (kind) {
      case MaterialKind::mirror:
        result += albedo * reflect_ray(hit, n, wo, depth, weight * max_component(albedo));
        break;
      case MaterialKind::plastic:
      case MaterialKind::metal: {
        Color f = bsdf->specular_reflectance(wo);
        result += f * reflect_ray(hit, n, wo, depth, weight * max_component(f));
        break;
      }
      case MaterialKind::glass:
        result += refract_and_reflect(hit, sp.bsdf.ior, albedo, n, ng, wo, depth, weight);
        break;
      default:
        break;
    }
    return result;
  }

 private:
  // Classic Whitted glass: both the reflected and the refracted ray, weighted by Fresnel.
  Color refract_and_reflect(const SurfaceHit& hit, float ior, Color albedo, Vec3 n, Vec3 ng, Vec3 wo, int depth,
                            float weight) {
    float eta = hit.front ? ior : 1 / ior;
    float cos_i = dot(wo, n);
    float f = fresnel_dielectric(cos_i, eta);
    Color result = Color{f} * reflect_ray(hit, n, wo, depth, weight * f);
    if (f < 1) {
      float sin2_t = (1 - cos_i * cos_i) / (eta * eta);
      float cos_t = std::sqrt(std::fmax(0.0f, 1 - sin2_t));
      Vec3 wt = normalize(-wo / eta + n * (cos_i / eta - cos_t));
      float w = weight * (1 - f) * max_component(albedo);
      if (w >= k_bailout) {
        ++m_counts.refracted;
        result += albedo * (1 - f) * trace({offset_origin(hit.p, ng, wt), wt}, depth + 1, w);
      }
    }
    return result;
  }

  Color reflect_ray(const SurfaceHit& hit, Vec3 n, Vec3 wo, int depth, float weight) {
    if (weight < k_bailout) return Color{0.0f};
    Vec3 wr = reflect(wo, n);
    ++m_counts.reflected;
    Vec3 ng = hit.front ? hit.ng : -hit.ng;
    return trace({offset_origin(hit.p, ng, wr), wr}, depth + 1, weight);
  }

  Color direct_light(const Bsdf& bsdf, Vec3 p, Vec3 ng, Vec3 wo) {
    Color sum{0.0f};
    const LightSet& lights = m_scene.lights;
    // Every point, spot and directional light, each with one hard shadow ray.
    for (const LightDesc& d : lights.delta_lights()) {
      LightSample s = LightSet::sample_delta(d, p);
      sum += shade(bsdf, p, ng, wo, s, 1.0f);
    }
    // One sample of the area emitters per camera sample: soft shadows that converge with spp.
    if (lights.has_area_lights()) {
      float u = m_sampler.next();
      Vec2 u2 = m_sampler.next2();
      LightSample s = lights.sample_area(p, u, u2);
      if (s.pdf > 0) sum += shade(bsdf, p, ng, wo, s, s.pdf);
    }
    return sum;
  }

  Color shade(const Bsdf& bsdf, Vec3 p, Vec3 ng, Vec3 wo, const LightSample& s, float pdf) {
    if (is_black(s.radiance) || dot(s.wi, ng) <= 0) return Color{0.0f};
    Color f = bsdf.eval(wo, s.wi);
    if (is_black(f)) return Color{0.0f};
    ++m_counts.shadow;
    Vec3 o = offset_origin(p, ng, s.wi);
    float t_max = std::isinf(s.distance) ? k_ray_infinity : s.distance * (1 - 1e-4f);
    if (m_tracer.occluded(o, s.wi, t_max)) return Color{0.0f};
    return f * s.radiance / pdf;
  }

  const Tracer& m_tracer;
  const Scene& m_scene;
  PixelSampler& m_sampler;
  RayCounts& m_counts;
};

}  // namespace

const MaterialDesc& material_of(const Scene& scene, int index) {
  static const MaterialDesc k_default_material{};
  if (index < 0 || index >= static_cast<int>(scene.materials.size())) return k_default_material;
  return scene.materials[index];
}

Color trace_whitted(const Tracer& tracer, const Ray& ray, const SurfaceHit* first_hit, PixelSampler& sampler,
                    RayCounts& counts) {
  if (!first_hit) return tracer.scene().environment.eval(ray.direction);
  return Whitted(tracer, sampler, counts).shade_hit(ray, *first_hit, 0, 1.0f);
}

}  // namespace rt
