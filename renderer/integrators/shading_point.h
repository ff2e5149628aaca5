// A material evaluated at one hit: its textures looked up, vertex colours applied, the
// normal map or bump map bent into the shading normal, emission found. Both integrators
// shade through this, so a textured glTF material means the same to Whitted and to paths.
#pragma once

#include "integrators/tracer.h"
#include "shading/bsdf.h"

namespace rt {

struct ShadingPoint {
  BsdfParams bsdf;         // never MaterialKind::pbr (resolved into a plastic coat)
  Vec3 ns;                 // shading normal after normal/bump mapping, on ng's side
  Color emission{0.0f};    // radiance leaving the front face (and the back if two-sided)
  bool two_sided = false;
};

ShadingPoint shade(const Scene& scene, const MaterialDesc& material, const SurfaceHit& hit);

// Emission of the shading point towards `w` (pointing away from the surface).
inline Color emitted_towards(const ShadingPoint& sp, Vec3 ng, Vec3 w) {
  return (sp.two_sided || dot(ng, w) > 0) ? sp.emission : Color{0.0f};
}

}  // namespace rt
