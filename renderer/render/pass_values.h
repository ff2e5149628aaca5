// What a pixel's passes (scene/passes.h) gather over its samples, and the floats they become.
// Only the pixel's own samples are read, so a pass is as tiling-invariant as the colour.
#pragma once

#include "integrators/tracer.h"
#include "scene/passes.h"
#include "world/scene.h"

namespace rt {

constexpr float k_sky_depth = 1e10f;  // Blender's depth where a ray hits nothing

struct PixelPassSums {
  Color albedo{0.0f};    // summed over samples
  Vec3 normal{0.0f};     // summed over samples
  float depth = k_sky_depth;  // the first sample's
  Vec3 position{0.0f};
  float object = 0, material = 0;
};

// Where the camera is and looks, for the depth pass.
struct ViewAxis {
  Vec3 origin, forward;
};

// Adds one sample's first hit (`hit` nullptr: the sky). `first_sample`: the pixel's first, whose
// depth, position and ids the pixel keeps (Blender's convention: one sample's, not a blend of
// two surfaces' depths at an edge).
void add_first_hit(PixelPassSums& sums, const Scene& scene, const SurfaceHit* hit, const ViewAxis& view,
                   bool first_sample);

// Writes pass_channel_count(set) floats: the passes of a pixel that took `taken` samples whose
// colours sum to `sum` and their squares to `sum_sq`.
void write_pass_values(PassSet set, const PixelPassSums& sums, const Color& sum, const Color& sum_sq, int taken,
                       float* out);

}  // namespace rt
