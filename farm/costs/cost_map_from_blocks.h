// A cost map from blocks that were rendered whole (the farm's accepted results): coarser than
// `farm single --cost-map`'s, since a block's seconds are known only as a sum, but free.
#pragma once

#include <vector>

#include "scheduler/block.h"
#include "costs/cost_map.h"

namespace farm {

struct MeasuredBlock {
  Block block;           // block.frame is the scene's frame number
  double seconds = 0;    // its render time
};

// Each block's seconds spread evenly over its pixels and summed per tile. Map frame i is scene
// frame frames[i - 1]; blocks of other frames are ignored. The tile is the smallest side of a
// block not clipped by the image's right or bottom edge (4 without blocks), doubled while the
// map would exceed CostMap::k_max_cells.
CostMap cost_map_from_blocks(int width, int height, const std::vector<int>& frames,
                             const std::vector<MeasuredBlock>& blocks);

}  // namespace farm
