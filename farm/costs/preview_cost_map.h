// A cheap preview of where a frame's render time goes: the scene rendered at a fraction of its
// resolution and samples, each tile timed, the map rescaled to the full job. `farm plan` feeds it
// to the simulator; the master's factoring policy sizes blocks by it (relative costs are what
// matter there: the scheduler measures worker speeds in the map's unit).
#pragma once

#include "costs/cost_map.h"
#include "scheduler/scheduler_types.h"
#include "scene/scene_desc.h"

namespace farm {

struct PreviewSettings {
  int scale = 4;  // preview resolution = full / scale on each axis
  // Preview samples per pixel, 0 = min(spp, 8); costs are scaled by full spp / this. Fewer
  // samples over-predict (per-pixel work does not scale with spp): +13% at 2 spp against 8,
  // +7% at 8 spp and a quarter of the resolution (results/cost_map_scaling.md).
  int spp = 0;
  int threads = 0;
};

struct PreviewResult {
  CostMap map;           // at the full job's resolution, costs scaled to its spp
  double wall_seconds = 0;
  int width = 0, height = 0, spp = 0;
};

// Renders frame `frame` of `desc` at the preview settings, tile costs measured, and rescales
// the map to desc's resolution and spp. Throws what scene loading throws.
PreviewResult preview_cost_map(const rt::SceneDesc& desc, int frame, const PreviewSettings& preview);

// The factoring policy's cost model: a preview of `frame` (a quarter of the size, 1 spp: 1/(16
// spp) of a frame's work, enough to rank regions by cost), set as `config.block_cost` for every
// frame (a first frame's hot spots are usually the animation's). Returns the preview's figures;
// its map is moved into the cost function.
PreviewResult preview_block_cost(const rt::SceneDesc& desc, int frame, SchedulerConfig& config);

}  // namespace farm
