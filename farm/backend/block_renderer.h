// The seam between the farm and what renders its pixels (docs/backends.md). The scheduler,
// protocol, journal, live view and outputs see only blocks of linear float RGBA; which renderer
// made them is this layer's business: ours (TOML, glTF scenes), POV-Ray (.pov) or Blender (.blend).
#pragma once

#include <cstdint>

#include "scheduler/block.h"

namespace farm {

class BlockRenderer {
 public:
  virtual ~BlockRenderer() = default;
  // Renders `block` into `rgba`: block.width x block.height pixels, 4 linear floats each, rows
  // from the top; and, when carried_floats() > 0, the rest of a multi-layer output's channels
  // into `carried` (that many floats per pixel, in proto::JobSettings::channels' order). Called
  // from several of the worker's render threads at once. Returns the rays traced, or 0 where the
  // renderer does not say. Throws std::runtime_error on failure.
  virtual uint64_t render(const Block& block, float* rgba, float* carried) = 0;
  // Floats per pixel this renderer writes into `carried`: proto::carried_floats of the job (our
  // renderer's passes, a multi-layer .blend's channels); 0 for a job whose output is the colour.
  virtual int carried_floats() const { return 0; }
  // Stops a render of `block` in progress on another thread (its render() then throws), or every
  // render in progress: the result is no longer wanted (another worker committed the block, the
  // job ended). For renderers run as processes, so that one that hangs costs only its block; the
  // farm's own renderer always finishes and ignores these.
  virtual void interrupt(const Block& block) { (void)block; }
  virtual void interrupt_all() {}
  // Seconds of a block's render that do not depend on its size (a process start, a scene parse),
  // as measured by this renderer; 0 where negligible. The master adds it to the worker's per-lease
  // overhead, which the factoring policy weighs against smaller blocks.
  virtual double seconds_per_block() const { return 0; }
};

}  // namespace farm
