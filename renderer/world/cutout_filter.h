// Embree filter for cut-out materials (glTF alphaMode MASK/BLEND, MTL map_d): a candidate
// hit where the material's alpha says "not there" is rejected, for camera, path and shadow
// rays alike, so light passes through leaves and fences.
//
// MASK keeps a hit where alpha >= cutoff. BLEND is a stochastic cut-out: a hit is kept with
// probability alpha, decided by a hash of the ray and the primitive, so the decision is a pure
// function of the ray (identical on every machine and tiling) and averages to the blended
// result over a pixel's samples.
#pragma once

#include <embree3/rtcore.h>

namespace rt {

void cutout_filter(const RTCFilterFunctionNArguments* args);

}  // namespace rt
