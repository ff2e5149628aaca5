// A ray: what cameras make and tracers follow. Here, below both, so the integrators need not
// include the camera (render/) that sits above them.
#pragma once

#include "math/vec.h"

namespace rt {

struct Ray {
  Vec3 origin;
  Vec3 direction;  // unit length
};

}  // namespace rt
