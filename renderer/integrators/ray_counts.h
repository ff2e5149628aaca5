// Rays traced, by kind (POV-Ray-like statistics): the integrators count, render_rect sums.
#pragma once

#include <cstdint>

namespace rt {

struct RayCounts {
  uint64_t camera = 0;
  uint64_t shadow = 0;
  uint64_t reflected = 0;
  uint64_t refracted = 0;
  uint64_t indirect = 0;  // path tracing's diffuse/glossy bounces
  uint64_t total() const { return camera + shadow + reflected + refracted + indirect; }

  RayCounts& operator+=(const RayCounts& o) {
    camera += o.camera;
    shadow += o.shadow;
    reflected += o.reflected;
    refracted += o.refracted;
    indirect += o.indirect;
    return *this;
  }
};

}  // namespace rt
