#include "costs/preview_cost_map.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "base/memory.h"
#include "costs/cost_map_render.h"
#include "render/render.h"
#include "world/scene.h"

namespace farm {

PreviewResult preview_cost_map(const rt::SceneDesc& desc, int frame, const PreviewSettings& preview) {
  const auto t0 = std::chrono::steady_clock::now();
  rt::SceneDesc small = desc;
  rt::RenderSettings& s = small.settings;
  s.width = std::max(1, desc.settings.width / std::max(1, preview.scale));
  s.height = std::max(1, desc.settings.height / std::max(1, preview.scale));
  s.spp = preview.spp > 0 ? std::clamp(preview.spp, 1, desc.settings.spp) : std::min(desc.settings.spp, 8);
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
  render_frame_with_costs(*scene, frame, rgba.data(), map, 1);
  PreviewResult r;
  r.width = s.width;
  r.height = s.height;
  r.spp = s.spp;
  const double work_factor = static_cast<double>(desc.settings.spp) / s.spp;
  r.map = map.scaled(desc.settings.width, desc.settings.height, work_factor, 4);
  r.map.note = "preview " + std::to_string(s.width) + "x" + std::to_string(s.height) + " spp " + std::to_string(s.spp) +
               " scaled to " + std::to_string(desc.settings.width) + "x" + std::to_string(desc.settings.height) +
               " spp " + std::to_string(desc.settings.spp);
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
