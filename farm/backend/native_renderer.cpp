#include "backend/native_renderer.h"

#include "render/render.h"

namespace farm {

uint64_t NativeRenderer::render(const Block& b, float* rgba, float* passes) {
  rt::RayCounts rays;
  rt::render_rect(m_scene, b.frame, {b.x, b.y, b.width, b.height}, rgba, &rays, passes);
  return rays.total();
}

}  // namespace farm
