// Integrators compute the radiance arriving at the camera along one camera ray.
#pragma once

#include "integrators/tracer.h"
#include "integrators/ray_counts.h"
#include "sampling/pixel_sampler.h"

namespace rt {

// POV-Ray-like: direct light from point/spot/directional lights (and one sample of the area
// emitters, for soft shadows), an ambient term, and recursive perfect reflection/refraction.
// `first_hit` is where the camera ray `ray` hits (traced beforehand, in a packet), nullptr
// when it hits nothing.
Color trace_whitted(const Tracer& tracer, const Ray& ray, const SurfaceHit* first_hit, PixelSampler& sampler,
                    RayCounts& counts);

// Unidirectional path tracing with next-event estimation, MIS (power heuristic) between
// BSDF and light sampling for area and environment lights, and Russian roulette.
// `first_hit` as for trace_whitted.
Color trace_path(const Tracer& tracer, const Ray& ray, const SurfaceHit* first_hit, PixelSampler& sampler,
                 RayCounts& counts);

// The material of a hit; objects without one get a grey diffuse default.
const MaterialDesc& material_of(const Scene& scene, int index);

}  // namespace rt
