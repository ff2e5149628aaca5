// The farm's own renderer behind the seam: a loaded rt::Scene, rendered block by block.
#pragma once

#include <cstddef>

#include "backend/block_renderer.h"
#include "world/scene.h"

namespace farm {

// Our renderer's pixels as a multi-layer output carries them after the colour (rt::
// layered_channel_names): the alpha, then the passes (`pass_floats` each), for `pixels` pixels.
void carry_alpha_and_passes(const float* rgba, const float* passes, int pass_floats, size_t pixels, float* carried);

class NativeRenderer : public BlockRenderer {
 public:
  explicit NativeRenderer(const rt::Scene& scene) : m_scene(scene) {}
  uint64_t render(const Block& block, float* rgba, float* carried) override;
  int carried_floats() const override;

 private:
  const rt::Scene& m_scene;
};

}  // namespace farm
