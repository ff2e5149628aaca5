// The seam between the farm and what renders its pixels (docs/backends.md). The scheduler,
// protocol, journal, live view and outputs see only blocks of linear float RGBA; which renderer
// made them is this layer's business: ours (TOML, glTF scenes) or POV-Ray (.pov scenes).
#pragma once

#include <cstdint>

#include "scheduler/block.h"

namespace farm {

class BlockRenderer {
 public:
  virtual ~BlockRenderer() = default;
  // Renders `block` into `rgba`: block.width x block.height pixels, 4 linear floats each, rows
  // from the top. Called from several of the worker's render threads at once. Returns the rays
  // traced, or 0 where the renderer does not say. Throws std::runtime_error on failure.
  virtual uint64_t render(const Block& block, float* rgba) = 0;
};

}  // namespace farm
