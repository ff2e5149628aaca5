#include "integrators/shading_point.h"

#include <algorithm>
#include <cmath>

namespace rt {

namespace {

constexpr float k_dielectric_f0 = 0.04f;  // glTF: reflectance of every non-metal at normal incidence

HitUvs uvs_of(const SurfaceHit& hit) { return {hit.uv, hit.uv1}; }

Color albedo_at(const Scene& scene, const MaterialDesc& m, const SurfaceHit& hit) {
  Color c = m.albedo.value;
  if (m.albedo.valid()) c *= scene.textures.color(m.albedo, hit.p, uvs_of(hit));
  if (m.vertex_colors) c *= hit.color;
  return c;
}

// Tangent-space normal map (glTF: +X along u, +Y along v up the image, +Z out of the surface).
// The tangent frame comes from the triangle's uv derivatives, Gram-Schmidt against ns; the
// bitangent's sign follows dp/dv so mirrored uv islands bend the right way.
Vec3 apply_normal_map(const Scene& scene, const MaterialDesc& m, const SurfaceHit& hit, Vec3 ns) {
  Vec3 t = hit.dpdu - ns * dot(ns, hit.dpdu);
  if (!(length_squared(t) > 0)) return ns;
  t = normalize(t);
  Vec3 b = cross(ns, t);
  if (dot(b, hit.dpdv) < 0) b = -b;
  Color texel = scene.textures.raw(m.normal_map, hit.p, uvs_of(hit)).rgb;
  float x = (2 * texel.x - 1) * m.normal_scale, y = (2 * texel.y - 1) * m.normal_scale, z = 2 * texel.z - 1;
  Vec3 n = normalize(t * x + b * y + ns * std::max(z, 1e-3f));
  return is_finite(n) ? n : ns;
}

// Height-map bump: the height's slope along u and v tilts the normal (pbrt's bump mapping,
// displacement along the normal). One filtered lookup gives the height's derivatives.
Vec3 apply_bump_map(const Scene& scene, const MaterialDesc& m, const SurfaceHit& hit, Vec3 ns) {
  if (scene.textures.resolution(m.bump_map.texture).first <= 0) return ns;
  TextureStore::Gradient g = scene.textures.first_channel_gradient(m.bump_map, uvs_of(hit));
  // bump_scale is in uv units; the surface's length per uv unit turns it into scene units.
  float scale = m.bump_scale * std::sqrt(length(hit.dpdu) * length(hit.dpdv));
  Vec3 pu = hit.dpdu + ns * (g.d_du * scale), pv = hit.dpdv + ns * (g.d_dv * scale);
  Vec3 n = normalize(cross(pu, pv));
  if (!is_finite(n)) return ns;
  return dot(n, ns) < 0 ? -n : n;
}

void resolve_pbr(const Scene& scene, const MaterialDesc& m, const SurfaceHit& hit, BsdfParams& p) {
  float metallic = m.metallic, roughness = m.roughness;
  if (m.metallic_roughness.valid()) {
    Color t = scene.textures.raw(m.metallic_roughness, hit.p, uvs_of(hit)).rgb;
    roughness *= t.y;
    metallic *= t.z;
  }
  metallic = std::clamp(std::isfinite(metallic) ? metallic : 0.0f, 0.0f, 1.0f);
  Color base = p.albedo;
  p.kind = MaterialKind::plastic;
  p.albedo = base * (1 - metallic);
  p.specular = lerp(Color{k_dielectric_f0}, base, metallic);
  p.roughness = std::clamp(std::isfinite(roughness) ? roughness : 1.0f, 0.001f, 1.0f);
}

}  // namespace

ShadingPoint shade(const Scene& scene, const MaterialDesc& m, const SurfaceHit& hit) {
  ShadingPoint sp;
  sp.bsdf.kind = m.kind;
  sp.bsdf.albedo = albedo_at(scene, m, hit);
  sp.bsdf.specular = m.specular;
  sp.bsdf.roughness = m.roughness;
  sp.bsdf.ior = m.ior;
  sp.ns = hit.ns;
  if (hit.has_uv_frame) {
    if (m.normal_map.valid()) sp.ns = apply_normal_map(scene, m, hit, sp.ns);
    else if (m.bump_map.valid()) sp.ns = apply_bump_map(scene, m, hit, sp.ns);
    if (dot(sp.ns, hit.ng) <= 0) sp.ns = hit.ns;  // a map must not turn the surface inside out
  }
  if (m.kind == MaterialKind::pbr) resolve_pbr(scene, m, hit, sp.bsdf);
  if (has_emission(m)) {
    sp.emission = m.emission;
    if (m.emission_map.valid()) sp.emission *= scene.textures.color(m.emission_map, hit.p, uvs_of(hit));
    sp.two_sided = m.two_sided;
  }
  return sp;
}

}  // namespace rt
