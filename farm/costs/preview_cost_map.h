// A cheap preview of where a frame's render time goes, for a scheduler that sizes blocks by
// predicted cost (the factoring policy): the scene rendered at a fraction of its resolution
// with one sample per pixel, each tile timed, then resampled to the full resolution. Costs are
// in the preview's own unit; the scheduler measures worker speeds in that same unit, so only
// the relative costs matter.
#pragma once

#include "costs/cost_map.h"
#include "scene/scene_desc.h"

namespace farm {

struct PreviewOptions {
  int divisor = 4;     // preview side = full side / divisor (at least 16 px)
  int threads = 0;     // 0: all
  int tile = 8;        // preview pixels per measured tile
};

// One frame of `desc` (its first by default), at full resolution in tiles of `full_tile`.
// Throws rt::SceneError or std::runtime_error when the scene cannot be loaded.
CostMap preview_cost_map(const rt::SceneDesc& desc, int frame, int full_tile, const PreviewOptions& options = {});

}  // namespace farm
