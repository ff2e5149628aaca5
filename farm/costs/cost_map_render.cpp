#include "costs/cost_map_render.h"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

namespace farm {

namespace {

// render_rect cuts its rectangle into grains of 8 x 8 pixels (renderer/render/render.cpp) and
// only a rectangle larger than one grain forks into the TBB arena.
constexpr int k_render_grain = 8;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Renders `tile` into its place in the frame and returns the CPU seconds of this thread it took.
// The tile is rendered as grain-sized pieces one after the other, so none of them forks: the
// thread's CPU clock then sees all of the tile's work and nothing else. (A larger render_rect
// would spread over other threads, and a thread waiting for it may steal another tile, so
// neither wall nor CPU time would belong to this tile alone.)
double render_tile(const rt::Scene& scene, int frame, const rt::Rect& tile, float* rgba, float* passes,
                   int image_width, rt::RayCounts& counts) {
  float piece_rgba[k_render_grain * k_render_grain * 4];
  const size_t k = passes ? static_cast<size_t>(rt::pass_channel_count(scene.desc.settings.passes)) : 0;
  std::vector<float> piece_passes(k * k_render_grain * k_render_grain);
  const double t0 = thread_cpu_seconds();  // includes copying the pieces: bytes against rays
  for (int y = tile.y; y < tile.y + tile.height; y += k_render_grain) {
    for (int x = tile.x; x < tile.x + tile.width; x += k_render_grain) {
      const rt::Rect piece{x, y, std::min(k_render_grain, tile.x + tile.width - x),
                           std::min(k_render_grain, tile.y + tile.height - y)};
      rt::render_rect(scene, frame, piece, piece_rgba, &counts, k ? piece_passes.data() : nullptr);
      for (int row = 0; row < piece.height; ++row) {
        const size_t at = (static_cast<size_t>(y) + row) * image_width + x;
        std::memcpy(rgba + 4 * at, piece_rgba + 4 * row * piece.width, sizeof(float) * 4 * piece.width);
        if (k) std::memcpy(passes + k * at, &piece_passes[k * row * piece.width], sizeof(float) * k * piece.width);
      }
    }
  }
  return thread_cpu_seconds() - t0;
}

}  // namespace

void render_frame_with_costs(const rt::Scene& scene, int frame, float* rgba, CostMap& map, int map_frame,
                             rt::RayCounts* counts, float* passes) {
  const rt::RenderSettings& s = scene.desc.settings;
  if (map.width() != s.width || map.height() != s.height) {
    throw std::invalid_argument("cost map of " + std::to_string(map.width()) + "x" + std::to_string(map.height()) +
                                " for an image of " + std::to_string(s.width) + "x" + std::to_string(s.height));
  }
  const int columns = map.columns(), tile = map.tile();
  tbb::combinable<rt::RayCounts> local_counts;
  // Each thread renders its first tile twice and keeps the second time: a thread's first render
  // pays one-off costs (the pixel filter's table, its Embree and TBB thread state, first touches
  // of the scene's memory). They made the first tile of a 1-spp preview 40-90x the median tile,
  // so a worker whose first block held it looked that much faster to the factoring policy. The
  // second render writes the same pixels.
  tbb::enumerable_thread_specific<bool> warmed(false);
  tbb::parallel_for(tbb::blocked_range<int>(0, columns * map.rows()), [&](const tbb::blocked_range<int>& range) {
    for (int i = range.begin(); i < range.end(); ++i) {
      const int column = i % columns, row = i / columns;
      const rt::Rect rect{column * tile, row * tile, std::min(tile, s.width - column * tile),
                          std::min(tile, s.height - row * tile)};
      // Each tile is its own map cell: threads never write the same element.
      bool& warm = warmed.local();
      if (!warm) {
        rt::RayCounts ignored;
        render_tile(scene, frame, rect, rgba, passes, s.width, ignored);
        warm = true;
      }
      map.at(map_frame, column, row) = render_tile(scene, frame, rect, rgba, passes, s.width, local_counts.local());
    }
  });
  if (counts) local_counts.combine_each([&](const rt::RayCounts& c) { *counts += c; });
}

}  // namespace farm
