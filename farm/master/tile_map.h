// The tile map: which worker rendered which block, drawn over the image (`--tile-map`).
#pragma once

#include <string>
#include <vector>

#include "control/run_stats.h"

namespace farm {

// The frame's image, dimmed, with every accepted block outlined in its worker's colour.
void write_tile_map(const std::string& path, int width, int height, std::vector<float> rgba, int frame,
                    const RunStats& stats);

}  // namespace farm
