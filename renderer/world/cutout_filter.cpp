#include "world/cutout_filter.h"

#include <cstring>

#include "sampling/pixel_sampler.h"
#include "world/scene.h"

namespace rt {

namespace {

uint64_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Uniform in [0, 1) from the ray and the primitive: a fixed decision per (ray, triangle).
float blend_threshold(const RTCFilterFunctionNArguments* a, unsigned i, unsigned prim) {
  uint64_t h = hash_combine(bits(RTCRayN_org_x(a->ray, a->N, i)), bits(RTCRayN_org_y(a->ray, a->N, i)));
  h = hash_combine(h, bits(RTCRayN_org_z(a->ray, a->N, i)) << 32 | bits(RTCRayN_dir_x(a->ray, a->N, i)));
  h = hash_combine(h, bits(RTCRayN_dir_y(a->ray, a->N, i)) << 32 | bits(RTCRayN_dir_z(a->ray, a->N, i)));
  return u64_to_unit_float(hash_combine(h, prim));
}

bool keeps_hit(const CutoutData& d, const RTCFilterFunctionNArguments* a, unsigned i) {
  const Scene& scene = *d.scene;
  const TriangleMesh& m = *d.mesh;
  const unsigned prim = RTCHitN_primID(a->hit, a->N, i);
  if (3 * static_cast<size_t>(prim) + 2 >= m.indices.size()) return true;
  int material = m.face_materials.empty() ? m.material : d.material_base + static_cast<int>(m.face_materials[prim]);
  const unsigned inst = RTCHitN_instID(a->hit, a->N, i, 0);
  if (inst != RTC_INVALID_GEOMETRY_ID && inst < scene.records.size() && scene.records[inst].material_override >= 0) {
    material = scene.records[inst].material_override;
  }
  if (material < 0 || material >= static_cast<int>(scene.materials.size())) return true;
  const MaterialDesc& mat = scene.materials[material];
  if (mat.alpha_mode == AlphaMode::opaque) return true;

  const float b1 = RTCHitN_u(a->hit, a->N, i), b2 = RTCHitN_v(a->hit, a->N, i), b0 = 1 - b1 - b2;
  const uint32_t* ix = &m.indices[3 * static_cast<size_t>(prim)];
  auto lerp3 = [&](const std::vector<Vec2>& uv) { return uv[ix[0]] * b0 + uv[ix[1]] * b1 + uv[ix[2]] * b2; };
  HitUvs uvs;
  if (!m.uvs.empty()) uvs.uv0 = lerp3(m.uvs);
  uvs.uv1 = m.uvs1.empty() ? uvs.uv0 : lerp3(m.uvs1);
  // Object-space position: only procedural (checker) opacity would use it.
  const float t = RTCRayN_tfar(a->ray, a->N, i);
  Vec3 p{RTCRayN_org_x(a->ray, a->N, i) + t * RTCRayN_dir_x(a->ray, a->N, i),
         RTCRayN_org_y(a->ray, a->N, i) + t * RTCRayN_dir_y(a->ray, a->N, i),
         RTCRayN_org_z(a->ray, a->N, i) + t * RTCRayN_dir_z(a->ray, a->N, i)};
  float alpha = material_alpha(scene.textures, mat, p, uvs);
  if (mat.alpha_mode == AlphaMode::mask) return alpha >= mat.alpha_cutoff;
  return blend_threshold(a, i, prim) < alpha;
}

}  // namespace

void cutout_filter(const RTCFilterFunctionNArguments* args) {
  const auto* data = static_cast<const CutoutData*>(args->geometryUserPtr);
  if (!data) return;
  for (unsigned i = 0; i < args->N; ++i) {
    if (args->valid[i] == 0) continue;
    if (!keeps_hit(*data, args, i)) args->valid[i] = 0;
  }
}

}  // namespace rt
