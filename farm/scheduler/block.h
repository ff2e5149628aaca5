// Blocks of the image and their carving: the vocabulary shared by the pool and the scheduler.
#pragma once

#include <cstdint>
#include <vector>

namespace farm {

// The largest block side (--block, --min-block, a POV-Ray grid): a block's pixels then fit one
// message and one journal record (master/journal_format.h).
inline constexpr int k_max_block_side = 4096;

// An axis-aligned rectangle of one frame.
struct Block {
  int frame = 1;
  int x = 0, y = 0, width = 0, height = 0;
  int size() const { return width > height ? width : height; }  // side of the enclosing square
  int64_t pixels() const { return static_cast<int64_t>(width) * height; }
  bool operator==(const Block& o) const {
    return frame == o.frame && x == o.x && y == o.y && width == o.width && height == o.height;
  }
};

// The S x S tiling of one frame, row-major, edge blocks clipped.
std::vector<Block> tile_frame(int frame, int image_width, int image_height, int block_size);

// Quadtree split: halves every side longer than `max_size` (the first half gets the extra
// pixel, or is rounded up to a multiple of `grid`). Returns 2 or 4 pieces in row-major order,
// or just `b` if it already fits or cannot be split on the grid.
std::vector<Block> split_block(const Block& b, int max_size, int grid = 1);

// `a` minus `b`: up to four rectangles covering exactly the pixels of `a` not in `b`
// (the band above, the band below, then left and right of `b`). `a` itself if they do not
// overlap or lie in different frames.
std::vector<Block> subtract_block(const Block& a, const Block& b);

}  // namespace farm
