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

std::vector<Block> split_block(const Block& b, int max_size) {
  if (b.size() <= max_size) return {b};
  const bool split_x = b.width > max_size, split_y = b.height > max_size;
  const int w0 = split_x ? (b.width + 1) / 2 : b.width, h0 = split_y ? (b.height + 1) / 2 : b.height;
  std::vector<Block> out;
  for (int j = 0; j < (split_y ? 2 : 1); ++j) {
    for (int i = 0; i < (split_x ? 2 : 1); ++i) {
      Block p{b.frame, b.x + i * w0, b.y + j * h0, i == 0 ? w0 : b.width - w0, j == 0 ? h0 : b.height - h0};
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace farm
