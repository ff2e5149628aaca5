#include "master/tile_map.h"

#include <map>

#include "image/image_io.h"

namespace farm {

void write_tile_map(const std::string& path, int width, int height, std::vector<float> rgba, int frame,
                    const RunStats& stats) {
  static const float palette[][3] = {{0.9f, 0.1f, 0.1f}, {0.1f, 0.8f, 0.1f}, {0.2f, 0.3f, 1.0f}, {1.0f, 0.8f, 0.0f},
                                     {0.9f, 0.1f, 0.9f}, {0.0f, 0.9f, 0.9f}, {1.0f, 0.5f, 0.0f}, {0.6f, 0.3f, 1.0f}};
  for (size_t i = 0; i < rgba.size(); i += 4)
    for (int c = 0; c < 3; ++c) rgba[i + c] *= 0.35f;
  auto paint = [&](int x, int y, const float* col) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    float* p = &rgba[4 * (static_cast<size_t>(y) * width + x)];
    for (int c = 0; c < 3; ++c) p[c] = col[c];
  };
  // Workers are coloured in the order they joined.
  std::map<WorkerId, int> colour;
  for (const auto& [id, w] : stats.workers()) colour[id] = static_cast<int>(colour.size()) % 8;
  for (const auto& [attempt, l] : stats.leases()) {
    if (l.outcome != LeaseOutcome::accepted || l.block.frame != frame) continue;
    const float* col = palette[colour[l.worker]];
    const Block& b = l.block;
    for (int x = b.x; x < b.x + b.width; ++x) {
      paint(x, b.y, col);
      paint(x, b.y + b.height - 1, col);
    }
    for (int y = b.y; y < b.y + b.height; ++y) {
      paint(b.x, y, col);
      paint(b.x + b.width - 1, y, col);
    }
  }
  rt::write_image(path, width, height, rgba.data());
}

}  // namespace farm
