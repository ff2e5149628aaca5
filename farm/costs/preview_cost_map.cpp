#include "costs/preview_cost_map.h"

#include <tbb/global_control.h>
#include <tbb/info.h>

#include <algorithm>
#include <vector>

#include "costs/cost_map_render.h"
#include "render/render.h"
#include "scene/scene.h"

namespace farm {

CostMap preview_cost_map(const rt::SceneDesc& desc, int frame, int full_tile, const PreviewOptions& options) {
  const rt::RenderSettings& full = desc.settings;
  rt::SceneDesc small = desc;
  const int divisor = std::max(1, options.divisor);
  // The same aspect, at least 16 px on the short side when the image allows it.
  const int shortest = std::min(full.width, full.height);
  const int d = std::max(1, std::min(divisor, shortest / 16));
  small.settings.width = std::max(1, full.width / d);
  small.settings.height = std::max(1, full.height / d);
  small.settings.spp = 1;
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  rt::LoadOptions load;
  load.embree_threads = threads;
  std::unique_ptr<rt::Scene> scene = rt::load_scene(small, load);
  CostMap map(small.settings.width, small.settings.height, std::max(1, options.tile), 1);
  std::vector<float> rgba(static_cast<size_t>(small.settings.width) * small.settings.height * 4);
  render_frame_with_costs(*scene, frame, rgba.data(), map, 1);
  // Back to full size: every pixel then carries the cost of the full job's samples.
  return map.scaled(full.width, full.height, std::max(1, full.spp), std::max(1, full_tile));
}

}  // namespace farm
