// Rendering a frame while measuring what each small tile of it costs (`farm single --cost-map`).
#pragma once

#include "render/render.h"
#include "costs/cost_map.h"

namespace farm {

// Renders all of `frame` into `rgba` (width x height x 4 floats, as rt::render_rect with the
// whole image) tile by tile in parallel, and stores each tile's render seconds in
// map.at(map_frame, column, row). The map's size and tile decide the tiling. The pixels are
// byte-identical to a one-call render: a pixel's value does not depend on the tiling.
// With `passes`, the frame's passes too (as rt::render_rect's).
void render_frame_with_costs(const rt::Scene& scene, int frame, float* rgba, CostMap& map, int map_frame,
                             rt::RayCounts* counts = nullptr, float* passes = nullptr);

}  // namespace farm
