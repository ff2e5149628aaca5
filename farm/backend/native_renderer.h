// The farm's own renderer behind the seam: a loaded rt::Scene, rendered block by block.
#pragma once

#include "backend/block_renderer.h"
#include "world/scene.h"

namespace farm {

class NativeRenderer : public BlockRenderer {
 public:
  explicit NativeRenderer(const rt::Scene& scene) : m_scene(scene) {}
  uint64_t render(const Block& block, float* rgba, float* passes) override;
  int pass_floats() const override { return rt::pass_channel_count(m_scene.desc.settings.passes); }

 private:
  const rt::Scene& m_scene;
};

}  // namespace farm
