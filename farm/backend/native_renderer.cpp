#include "backend/native_renderer.h"

#include <algorithm>
#include <vector>

#include "render/render.h"

namespace farm {

void carry_alpha_and_passes(const float* rgba, const float* passes, int pass_floats, size_t pixels, float* carried) {
  const size_t k = static_cast<size_t>(pass_floats);
  for (size_t i = 0; i < pixels; ++i) {
    carried[(k + 1) * i] = rgba[4 * i + 3];
    std::copy_n(&passes[k * i], k, &carried[(k + 1) * i + 1]);
  }
}

int NativeRenderer::carried_floats() const {
  const rt::PassSet passes = m_scene.desc.settings.passes;
  return passes ? 1 + rt::pass_channel_count(passes) : 0;
}

uint64_t NativeRenderer::render(const Block& b, float* rgba, float* carried) {
  rt::RayCounts rays;
  const int k = rt::pass_channel_count(m_scene.desc.settings.passes);
  if (!k || !carried) {
    rt::render_rect(m_scene, b.frame, {b.x, b.y, b.width, b.height}, rgba, &rays);
    return rays.total();
  }
  std::vector<float> passes(static_cast<size_t>(b.pixels()) * k);
  rt::render_rect(m_scene, b.frame, {b.x, b.y, b.width, b.height}, rgba, &rays, passes.data());
  carry_alpha_and_passes(rgba, passes.data(), k, static_cast<size_t>(b.pixels()), carried);
  return rays.total();
}

}  // namespace farm
