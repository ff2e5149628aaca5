#include "integrators/tracer.h"

#include <immintrin.h>

#include <cmath>

namespace rt {

namespace {

Vec3 normal_to_world(const Transform& object_from_world, Vec3 n) {
  const auto& m = object_from_world.m;  // world normal = (object_from_world)^T * n
  return normalize({m[0][0] * n.x + m[1][0] * n.y + m[2][0] * n.z, m[0][1] * n.x + m[1][1] * n.y + m[2][1] * n.z,
                    m[0][2] * n.x + m[1][2] * n.y + m[2][2] * n.z});
}

// Origin/tnear and direction/time are written with one 16-byte store each: Embree reads them
// with 16-byte loads, and separate scalar stores would defeat store-to-load forwarding (a
// stall on every ray; measured with perf in results/bench_embree_profile.md).
void set_ray(RTCRay& r, Vec3 o, Vec3 d, float t_max) {
  _mm_storeu_ps(&r.org_x, _mm_setr_ps(o.x, o.y, o.z, 0.0f));
  _mm_storeu_ps(&r.dir_x, _mm_setr_ps(d.x, d.y, d.z, 0.0f));
  r.tfar = t_max;
  r.mask = 0xffffffffu;
  r.id = 0;
  r.flags = 0;
}

// dp/du and dp/dv of a triangle from its corners and texture coordinates; false when the
// uv mapping is degenerate (all corners on one uv line).
bool uv_derivatives(Vec3 p0, Vec3 p1, Vec3 p2, Vec2 t0, Vec2 t1, Vec2 t2, Vec3& dpdu, Vec3& dpdv) {
  Vec2 d1{t1.x - t0.x, t1.y - t0.y}, d2{t2.x - t0.x, t2.y - t0.y};
  float det = d1.x * d2.y - d1.y * d2.x;
  if (!(std::fabs(det) > 1e-12f)) return false;
  float inv = 1 / det;
  Vec3 e1 = p1 - p0, e2 = p2 - p0;
  dpdu = (e1 * d2.y - e2 * d1.y) * inv;
  dpdv = (e2 * d1.x - e1 * d2.x) * inv;
  return is_finite(dpdu) && is_finite(dpdv);
}

}  // namespace

Tracer::Tracer(const Scene& scene) : m_scene(scene) {}

bool Tracer::occluded(Vec3 origin, Vec3 direction, float t_max) const {
  RTCIntersectContext ctx;
  rtcInitIntersectContext(&ctx);
  alignas(16) RTCRay r;
  set_ray(r, origin, direction, t_max);
  rtcOccluded1(m_scene.root.get(), &ctx, &r);
  return r.tfar < 0.0f;  // Embree sets tfar to -inf when something blocks the ray
}

bool Tracer::intersect(const Ray& ray, float t_max, SurfaceHit& hit) const {
  RTCIntersectContext ctx;
  rtcInitIntersectContext(&ctx);
  alignas(16) RTCRayHit rh;
  set_ray(rh.ray, ray.origin, ray.direction, t_max);
  rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
  rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
  rtcIntersect1(m_scene.root.get(), &ctx, &rh);
  if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return false;
  resolve(rh, ray, hit);
  return true;
}

void Tracer::intersect_packet(const Ray (&rays)[k_camera_packet], const bool (&valid)[k_camera_packet],
                              SurfaceHit (&hits)[k_camera_packet], bool (&found)[k_camera_packet]) const {
  static_assert(k_camera_packet == 16, "rtcIntersect16 below");
  RTCIntersectContext ctx;
  rtcInitIntersectContext(&ctx);
  ctx.flags = RTC_INTERSECT_CONTEXT_FLAG_COHERENT;
  alignas(64) RTCRayHit16 packet;
  alignas(64) int mask[k_camera_packet];
  for (int i = 0; i < k_camera_packet; ++i) {
    mask[i] = valid[i] ? -1 : 0;
    packet.ray.org_x[i] = rays[i].origin.x;
    packet.ray.org_y[i] = rays[i].origin.y;
    packet.ray.org_z[i] = rays[i].origin.z;
    packet.ray.tnear[i] = 0.0f;
    packet.ray.dir_x[i] = rays[i].direction.x;
    packet.ray.dir_y[i] = rays[i].direction.y;
    packet.ray.dir_z[i] = rays[i].direction.z;
    packet.ray.time[i] = 0.0f;
    packet.ray.tfar[i] = k_ray_infinity;
    packet.ray.mask[i] = 0xffffffffu;
    packet.ray.id[i] = 0;
    packet.ray.flags[i] = 0;
    packet.hit.geomID[i] = RTC_INVALID_GEOMETRY_ID;
    packet.hit.instID[0][i] = RTC_INVALID_GEOMETRY_ID;
  }
  rtcIntersect16(mask, m_scene.root.get(), &ctx, &packet);
  for (int i = 0; i < k_camera_packet; ++i) {
    found[i] = valid[i] && packet.hit.geomID[i] != RTC_INVALID_GEOMETRY_ID;
    if (!found[i]) continue;
    RTCRayHit rh;
    rh.ray.tfar = packet.ray.tfar[i];
    rh.hit.Ng_x = packet.hit.Ng_x[i];
    rh.hit.Ng_y = packet.hit.Ng_y[i];
    rh.hit.Ng_z = packet.hit.Ng_z[i];
    rh.hit.u = packet.hit.u[i];
    rh.hit.v = packet.hit.v[i];
    rh.hit.primID = packet.hit.primID[i];
    rh.hit.geomID = packet.hit.geomID[i];
    rh.hit.instID[0] = packet.hit.instID[0][i];
    resolve(rh, rays[i], hits[i]);
  }
}

void Tracer::resolve(const RTCRayHit& rh, const Ray& ray, SurfaceHit& hit) const {

  const GeometryRecord* rec;
  const GeometryRecord* instance = nullptr;
  if (rh.hit.instID[0] != RTC_INVALID_GEOMETRY_ID) {
    instance = &m_scene.records[rh.hit.instID[0]];
    rec = &m_scene.children[instance->child].records[rh.hit.geomID];
  } else {
    rec = &m_scene.records[rh.hit.geomID];
  }
  const unsigned prim = rh.hit.primID;
  hit.t = rh.ray.tfar;
  hit.object = static_cast<int>(instance ? rh.hit.instID[0] : rh.hit.geomID);
  hit.p = ray.origin + ray.direction * hit.t;
  hit.light = (!instance && !rec->prim_lights.empty()) ? rec->prim_lights[prim] : -1;

  if (rec->kind == GeometryKind::triangles) {
    const TriangleMesh& m = *rec->mesh;
    uint32_t i0 = m.indices[3 * prim], i1 = m.indices[3 * prim + 1], i2 = m.indices[3 * prim + 2];
    float b1 = rh.hit.u, b2 = rh.hit.v, b0 = 1 - b1 - b2;
    // Embree's Ng is (v1 - v0) x (v2 - v0) in the geometry's own space: no need to re-read
    // the vertices (cache misses on scattered rays).
    hit.ng = normalize(Vec3{rh.hit.Ng_x, rh.hit.Ng_y, rh.hit.Ng_z});
    hit.ns = m.normals.empty() ? hit.ng : normalize(m.normals[i0] * b0 + m.normals[i1] * b1 + m.normals[i2] * b2);
    hit.material = m.face_materials.empty() ? m.material : rec->material_base + static_cast<int>(m.face_materials[prim]);
    // Texture coordinates, colours and tangents only matter to materials that read them.
    const int material = instance && instance->material_override >= 0 ? instance->material_override : hit.material;
    const MaterialUse use = m_scene.material_use(material);
    auto lerp3 = [&](const auto& a) { return a[i0] * b0 + a[i1] * b1 + a[i2] * b2; };
    hit.uv = (!use.uvs || m.uvs.empty()) ? Vec2{b1, b2} : lerp3(m.uvs);
    hit.uv1 = (!use.uvs || m.uvs1.empty()) ? hit.uv : lerp3(m.uvs1);
    if (use.vertex_colors && !m.colors.empty()) hit.color = lerp3(m.colors);
    if (use.tangents && !m.uvs.empty()) {
      hit.has_uv_frame = uv_derivatives(m.positions[i0], m.positions[i1], m.positions[i2], m.uvs[i0], m.uvs[i1],
                                         m.uvs[i2], hit.dpdu, hit.dpdv);
      if (hit.has_uv_frame && instance) {
        hit.dpdu = instance->world_from_object.vector(hit.dpdu);
        hit.dpdv = instance->world_from_object.vector(hit.dpdv);
      }
    }
  } else {
    Vec3 c = rec->sphere_centers[prim];
    Vec3 p_local = instance ? instance->object_from_world.point(hit.p) : hit.p;
    Vec3 n = normalize(p_local - c);
    hit.ng = hit.ns = n;
    hit.uv = {0.5f + std::atan2(n.x, -n.z) / (2 * k_pi), std::acos(std::fmax(-1.0f, std::fmin(1.0f, n.y))) * k_inv_pi};
    hit.material = rec->sphere_materials[prim];
  }
  if (instance) {
    hit.ng = normal_to_world(instance->object_from_world, hit.ng);
    hit.ns = normal_to_world(instance->object_from_world, hit.ns);
    if (instance->material_override >= 0) hit.material = instance->material_override;
  }
  if (!is_finite(hit.ns) || dot(hit.ns, hit.ng) <= 0) hit.ns = hit.ng;
  hit.front = dot(ray.direction, hit.ng) < 0;
}

Vec3 offset_origin(Vec3 p, Vec3 ng, Vec3 direction) {
  float scale = 1.0f + std::fmax(std::fabs(p.x), std::fmax(std::fabs(p.y), std::fabs(p.z)));
  float eps = 2e-5f * scale;
  return dot(direction, ng) >= 0 ? p + ng * eps : p - ng * eps;
}

}  // namespace rt
