// Ray queries against a loaded scene, and what a hit means: position, normals, uv,
// material and (for sampled emitters) light index. Shared by every integrator.
#pragma once

#include <limits>

#include "math/ray.h"
#include "world/scene.h"

namespace rt {

struct SurfaceHit {
  float t = 0;
  Vec3 p;
  Vec3 ng;           // geometric normal, unit, as the geometry defines it (not flipped)
  Vec3 ns;           // shading normal, unit, on the same side as ng
  Vec2 uv;           // texture coordinates (set 0); barycentrics on untextured triangles
  Vec2 uv1;          // set 1 (= uv when the mesh has no second set)
  Color color{1.0f}; // interpolated vertex colour, when the material uses it
  Vec3 dpdu, dpdv;   // world-space surface derivatives along u and v, for normal/bump maps
  bool has_uv_frame = false;  // dpdu/dpdv are valid
  int material = -1;
  int object = -1;   // the scene's top-level geometry (an instance, a mesh file, a shape group)
  int light = -1;    // index into Scene::lights when the primitive is a sampled emitter
  bool front = true; // the ray arrived on the side ng points to
};

constexpr float k_ray_infinity = std::numeric_limits<float>::infinity();

// Camera rays are traced in packets of this many (render/render.cpp says which rays share one).
constexpr int k_camera_packet = 16;

class Tracer {
 public:
  explicit Tracer(const Scene& scene);
  bool intersect(const Ray& ray, float t_max, SurfaceHit& hit) const;
  bool occluded(Vec3 origin, Vec3 direction, float t_max) const;
  // Coherent rays (from one small patch of the camera) as one packet: several times faster
  // per ray than `intersect` one by one. Lanes with valid[i] false are not traced. A ray's
  // hit may depend on the other rays of its packet (Embree's traversal order follows the
  // packet), so callers must always trace a ray within the same packet.
  void intersect_packet(const Ray (&rays)[k_camera_packet], const bool (&valid)[k_camera_packet],
                        SurfaceHit (&hits)[k_camera_packet], bool (&found)[k_camera_packet]) const;
  const Scene& scene() const { return m_scene; }

 private:
  // What Embree's hit record `rh` for `ray` means (position, normals, uv, material, light).
  void resolve(const RTCRayHit& rh, const Ray& ray, SurfaceHit& hit) const;
  const Scene& m_scene;
};

// Moves a surface point off the surface towards the side `direction` leaves from, so the
// next ray does not hit the same surface again (scale-aware epsilon).
Vec3 offset_origin(Vec3 p, Vec3 ng, Vec3 direction);

}  // namespace rt
