#include "costs/cost_map_from_blocks.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace farm {

namespace {

// Clipped edge blocks can be one pixel wide whatever the block size: they do not count, unless
// nothing else is there (an image smaller than one block).
int smallest_side(int width, int height, const std::vector<MeasuredBlock>& blocks) {
  int interior = 0, any = 0;
  for (const MeasuredBlock& m : blocks) {
    const Block& b = m.block;
    const int side = std::min(b.width, b.height);
    if (side < 1) continue;
    any = any ? std::min(any, side) : side;
    if (b.x + b.width < width && b.y + b.height < height) interior = interior ? std::min(interior, side) : side;
  }
  const int side = interior ? interior : any ? any : 4;
  return std::min(side, CostMap::k_max_tile);
}

int64_t cells(int width, int height, int tile, int frames) {
  return int64_t{(width + tile - 1) / tile} * ((height + tile - 1) / tile) * frames;
}

// Adds `seconds` spread evenly over block `b` to the tiles of map frame `f` it overlaps.
void spread(CostMap& map, int f, const Block& b, double seconds) {
  const int t = map.tile();
  const int x1 = std::min(map.width(), b.x + b.width), y1 = std::min(map.height(), b.y + b.height);
  const int x0 = std::max(0, b.x), y0 = std::max(0, b.y);
  if (x1 <= x0 || y1 <= y0) return;
  const double per_pixel = seconds / (static_cast<double>(x1 - x0) * (y1 - y0));
  for (int row = y0 / t; row <= (y1 - 1) / t; ++row) {
    const int oy = std::min(y1, (row + 1) * t) - std::max(y0, row * t);
    for (int column = x0 / t; column <= (x1 - 1) / t; ++column) {
      const int ox = std::min(x1, (column + 1) * t) - std::max(x0, column * t);
      map.at(f, column, row) += per_pixel * ox * oy;
    }
  }
}

}  // namespace

CostMap cost_map_from_blocks(int width, int height, const std::vector<int>& frames,
                             const std::vector<MeasuredBlock>& blocks) {
  const int frame_count = std::max<int>(1, static_cast<int>(frames.size()));
  int tile = smallest_side(width, height, blocks);
  while (tile < CostMap::k_max_tile && cells(width, height, tile, frame_count) > CostMap::k_max_cells) tile *= 2;
  CostMap map(width, height, std::min(tile, CostMap::k_max_tile), frame_count);
  std::map<int, int> map_frame;  // scene frame -> map frame
  for (size_t i = 0; i < frames.size(); ++i) map_frame.emplace(frames[i], static_cast<int>(i) + 1);
  for (const MeasuredBlock& m : blocks) {
    auto it = map_frame.find(m.block.frame);
    if (it != map_frame.end() && std::isfinite(m.seconds) && m.seconds > 0) spread(map, it->second, m.block, m.seconds);
  }
  return map;
}

}  // namespace farm
