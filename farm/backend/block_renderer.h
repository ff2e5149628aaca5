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
  // from the top; and, when pass_floats() > 0, the job's passes into `passes` (that many floats
  // per pixel, scene/passes.h). Called from several of the worker's render threads at once.
  // Returns the rays traced, or 0 where the renderer does not say. Throws std::runtime_error on
  // failure.
  virtual uint64_t render(const Block& block, float* rgba, float* passes) = 0;
  // Floats of passes per pixel this renderer writes: the farm's own renderer writes the job's;
  // the others none (a job asking them for passes is refused: job_spec.cpp).
  virtual int pass_floats() const { return 0; }
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
