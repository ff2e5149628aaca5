#include "render/pass_values.h"

#include <algorithm>

#include "integrators/integrator.h"
#include "integrators/shading_point.h"

namespace rt {

namespace {

// The reflectance a denoiser wants as albedo: the material's colour in [0, 1]; 1 for perfect
// specular surfaces (mirror, glass), whose look comes from what they reflect (OIDN's advice).
Color first_hit_albedo(const ShadingPoint& sp) {
  if (sp.bsdf.kind == MaterialKind::mirror || sp.bsdf.kind == MaterialKind::glass) return Color{1.0f};
  const Color a = sp.bsdf.albedo;
  return {std::clamp(a.x, 0.0f, 1.0f), std::clamp(a.y, 0.0f, 1.0f), std::clamp(a.z, 0.0f, 1.0f)};
}

}  // namespace

void add_first_hit(PixelPassSums& sums, const Scene& scene, const SurfaceHit* hit, const ViewAxis& view,
                   bool first_sample) {
  if (!hit) return;  // the sky adds nothing: its albedo and normal are 0, its depth k_sky_depth
  const ShadingPoint sp = shade(scene, material_of(scene, hit->material), *hit);
  sums.albedo += first_hit_albedo(sp);
  sums.normal += sp.ns;
  if (first_sample) {
    sums.depth = dot(hit->p - view.origin, view.forward);
    sums.position = hit->p;
    sums.object = static_cast<float>(hit->object + 1);
    sums.material = static_cast<float>(hit->material + 1);
  }
}

void write_pass_values(PassSet set, const PixelPassSums& sums, const Color& sum, const Color& sum_sq, int taken,
                       float* out) {
  const float n = static_cast<float>(std::max(taken, 1));
  auto put3 = [&](Vec3 v) {
    *out++ = v.x;
    *out++ = v.y;
    *out++ = v.z;
  };
  if (has_pass(set, Pass::albedo)) put3(sums.albedo / n);
  if (has_pass(set, Pass::normal)) put3(sums.normal / n);
  if (has_pass(set, Pass::depth)) *out++ = sums.depth;
  if (has_pass(set, Pass::position)) put3(sums.position);
  if (has_pass(set, Pass::object_id)) *out++ = sums.object;
  if (has_pass(set, Pass::material_id)) *out++ = sums.material;
  if (has_pass(set, Pass::sample_count)) *out++ = static_cast<float>(taken);
  if (has_pass(set, Pass::variance)) {
    // The sample variance of each channel over n samples, divided by n: the variance of the
    // pixel's mean, averaged over R, G and B (0 with a single sample: nothing to estimate from).
    float v = 0.0f;
    if (taken > 1) {
      for (int c = 0; c < 3; ++c) {
        const float mean = sum[c] / n;
        v += std::max(0.0f, (sum_sq[c] - sum[c] * mean) / (n - 1.0f)) / n;
      }
    }
    *out++ = v / 3.0f;
  }
}

}  // namespace rt
