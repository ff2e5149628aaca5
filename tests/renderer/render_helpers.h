// Small helpers for renderer tests: build a scene from inline TOML and render it.
#pragma once

#include <string>
#include <vector>

#include "render/render.h"
#include "scene/scene_desc.h"

namespace test_render {

inline std::unique_ptr<rt::Scene> scene_from(const std::string& toml) {
  return rt::load_scene(rt::parse_scene_string(toml, "/virtual/test.toml"));
}

inline std::vector<float> render_full(const rt::Scene& scene, int frame = 1) {
  const auto& s = scene.desc.settings;
  std::vector<float> rgba(static_cast<size_t>(s.width) * s.height * 4);
  rt::render_rect(scene, frame, {0, 0, s.width, s.height}, rgba.data());
  return rgba;
}

// Mean of channel c over the pixel rectangle [x0, x1) x [y0, y1).
inline double mean_channel(const std::vector<float>& rgba, int width, int x0, int y0, int x1, int y1, int c) {
  double sum = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) sum += rgba[4 * (static_cast<size_t>(y) * width + x) + c];
  return sum / (static_cast<double>(x1 - x0) * (y1 - y0));
}

}  // namespace test_render
