#include "costs/preview_cost_map.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "base/memory.h"
#include "costs/cost_map_render.h"
#include "render/adaptive_sampling.h"
#include "render/render.h"
#include "world/scene.h"

namespace farm {

namespace {

// With adaptive sampling a pixel's cost is the samples it takes, which its noise decides. The
// preview then takes enough samples to estimate each pixel's error (at least 4, at most the first
// check) with adaptive sampling off, and scales each tile's measured cost by the samples its pixels
// are predicted to take (rt::AdaptiveSchedule::predicted_samples: the first check at which the
// estimate would pass with their samples' variance and mean) over those it took.
int adaptive_preview_spp(const rt::RenderSettings& full, const rt::AdaptiveSchedule& schedule) {
  return std::min(full.spp, std::max(4, std::min(schedule.first_check(), 8)));
}

void scale_by_predicted_samples(CostMap& map, const rt::RenderSettings& s, const rt::AdaptiveSchedule& schedule,
                                const std::vector<float>& rgba, const std::vector<float>& variance) {
  for (int row = 0; row < map.rows(); ++row) {
    for (int column = 0; column < map.columns(); ++column) {
      double predicted = 0;
      int pixels = 0;
      for (int y = row * map.tile(); y < std::min(s.height, (row + 1) * map.tile()); ++y) {
        for (int x = column * map.tile(); x < std::min(s.width, (column + 1) * map.tile()); ++x) {
          const size_t i = static_cast<size_t>(y) * s.width + x;
          const rt::Color mean{rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2]};
          predicted += schedule.predicted_samples(variance[i], mean, s.spp);
          ++pixels;
        }
      }
      if (pixels > 0) map.at(1, column, row) *= predicted / pixels / s.spp;
    }
  }
}

}  // namespace

PreviewResult preview_cost_map(const rt::SceneDesc& desc, int frame, const PreviewSettings& preview) {
  const auto t0 = std::chrono::steady_clock::now();
  rt::SceneDesc small = desc;
  rt::RenderSettings& s = small.settings;
  s.width = std::max(1, desc.settings.width / std::max(1, preview.scale));
  s.height = std::max(1, desc.settings.height / std::max(1, preview.scale));
  s.spp = preview.spp > 0 ? std::clamp(preview.spp, 1, desc.settings.spp) : std::min(desc.settings.spp, 8);
  const rt::AdaptiveSchedule adaptive(desc.settings);
  s.passes = 0;  // the preview's own: the variance, with adaptive sampling
  if (adaptive.on()) {
    s.spp = adaptive_preview_spp(desc.settings, adaptive);
    s.noise_threshold = 0;
    s.passes = 1u << static_cast<int>(rt::Pass::variance);
  }
  const int threads = preview.threads > 0 ? preview.threads : tbb::info::default_concurrency();
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  rt::LoadOptions load;
  load.embree_threads = threads;
  std::unique_ptr<rt::Scene> scene = rt::load_scene(small, load);
  // Tiles of 4 preview pixels are scale x 4 full pixels: fine enough for blocks down to 8.
  CostMap map(s.width, s.height, 4, 1);
  std::vector<float> rgba;
  allocate_filled(rgba, static_cast<size_t>(s.width) * s.height * 4, 0.0f,
                  "the preview's " + image_size_text(s.width, s.height) + " frame", "float RGBA");
  std::vector<float> variance(s.passes ? static_cast<size_t>(s.width) * s.height : 0);
  render_frame_with_costs(*scene, frame, rgba.data(), map, 1, nullptr, s.passes ? variance.data() : nullptr);
  if (adaptive.on()) scale_by_predicted_samples(map, s, adaptive, rgba, variance);
  PreviewResult r;
  r.width = s.width;
  r.height = s.height;
  r.spp = s.spp;
  // Without adaptive sampling every pixel takes spp; with it the tiles are scaled already.
  const double work_factor = adaptive.on() ? 1.0 : static_cast<double>(desc.settings.spp) / s.spp;
  r.map = map.scaled(desc.settings.width, desc.settings.height, work_factor, 4);
  r.map.note = "preview " + std::to_string(s.width) + "x" + std::to_string(s.height) + " spp " + std::to_string(s.spp) +
               " scaled to " + std::to_string(desc.settings.width) + "x" + std::to_string(desc.settings.height) +
               " spp " + std::to_string(desc.settings.spp) +
               (adaptive.on() ? " (adaptive: each tile by its pixels' predicted samples)" : "");
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

PreviewResult preview_block_cost(const rt::SceneDesc& desc, int frame, SchedulerConfig& config) {
  PreviewResult preview = preview_cost_map(desc, frame, PreviewSettings{4, 1, 0});
  auto map = std::make_shared<const CostMap>(std::move(preview.map));
  preview.map = CostMap();
  config.block_cost = [map](const Block& b) {
    Block first = b;
    first.frame = 1;
    return map->cost(first);
  };
  return preview;
}

}  // namespace farm
