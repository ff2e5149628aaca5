#include "scheduler/block.h"

#include <algorithm>

namespace farm {

std::vector<Block> tile_frame(int frame, int image_width, int image_height, int block_size) {
  std::vector<Block> blocks;
  for (int y = 0; y < image_height; y += block_size)
    for (int x = 0; x < image_width; x += block_size)
      blocks.push_back({frame, x, y, std::min(block_size, image_width - x), std::min(block_size, image_height - y)});
  return blocks;
}

std::vector<Block> split_block(const Block& b, int max_size, int grid) {
  if (b.size() <= max_size) return {b};
  auto half = [grid](int side) { return ((side + 1) / 2 + grid - 1) / grid * grid; };  // on the grid
  const bool split_x = b.width > max_size && half(b.width) < b.width;
  const bool split_y = b.height > max_size && half(b.height) < b.height;
  if (!split_x && !split_y) return {b};
  const int w0 = split_x ? half(b.width) : b.width, h0 = split_y ? half(b.height) : b.height;
  std::vector<Block> out;
  for (int j = 0; j < (split_y ? 2 : 1); ++j) {
    for (int i = 0; i < (split_x ? 2 : 1); ++i) {
      Block p{b.frame, b.x + i * w0, b.y + j * h0, i == 0 ? w0 : b.width - w0, j == 0 ? h0 : b.height - h0};
      out.push_back(p);
    }
  }
  return out;
}

std::vector<Block> subtract_block(const Block& a, const Block& b) {
  const int x0 = std::max(a.x, b.x), x1 = std::min(a.x + a.width, b.x + b.width);
  const int y0 = std::max(a.y, b.y), y1 = std::min(a.y + a.height, b.y + b.height);
  if (a.frame != b.frame || x0 >= x1 || y0 >= y1) return {a};
  std::vector<Block> out;
  if (y0 > a.y) out.push_back({a.frame, a.x, a.y, a.width, y0 - a.y});
  if (x0 > a.x) out.push_back({a.frame, a.x, y0, x0 - a.x, y1 - y0});
  if (x1 < a.x + a.width) out.push_back({a.frame, x1, y0, a.x + a.width - x1, y1 - y0});
  if (y1 < a.y + a.height) out.push_back({a.frame, a.x, y1, a.width, a.y + a.height - y1});
  return out;
}

}  // namespace farm
