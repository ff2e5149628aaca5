// The measured render cost of every small tile of a frame: what a block costs to render, for
// the simulator and for `farm plan`. Costs are seconds of one render thread on the machine that
// measured them (speed 1.0 in a cluster file means that machine's thread).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/block.h"

namespace farm {

class CostMap {
 public:
  CostMap() = default;
  // An all-zero map of `frames` frames of width x height pixels in tiles of `tile` pixels.
  CostMap(int width, int height, int tile, int frames = 1);

  int width() const { return m_width; }
  int height() const { return m_height; }
  int tile() const { return m_tile; }
  int frames() const { return m_frames; }
  int columns() const { return m_columns; }  // ceil(width / tile)
  int rows() const { return m_rows; }        // ceil(height / tile)
  // Pixels of tile (column, row): tile^2, fewer at the right and bottom edges.
  int64_t tile_pixels(int column, int row) const;

  // Seconds of tile (column, row) of `frame` (1-based); edge tiles may cover fewer pixels.
  double& at(int frame, int column, int row);
  double at(int frame, int column, int row) const;

  // Cost of any block: each tile it overlaps counts in proportion to the overlapped pixels.
  double cost(const Block& block) const;
  double total() const;              // every frame
  // The costliest of the finest blocks the scheduler can carve (S0 tiles halved by split_block
  // until no side exceeds min_block), over every frame. Every block any run hands out is a
  // union of these, so some block of every run costs at least this much.
  double costliest_min_block(int block_size, int min_block) const;
  double frame_total(int frame) const;

  // The same scene at another resolution and sample count: per-pixel cost density resampled
  // (bilinear over tile centres), totals scaled by the pixel count ratio and `work_factor`
  // (e.g. spp ratio). `tile` is the new map's tile size.
  CostMap scaled(int width, int height, double work_factor, int tile) const;

  // Text format ("farm-cost-map 1"): header line with width, height, tile, frames, then one
  // line per tile row with `columns` costs in seconds. Errors name the file and line.
  void write(const std::string& path) const;
  static CostMap read(const std::string& path);  // throws std::runtime_error

  // Limits read() enforces (a hostile header must not make it allocate gigabytes).
  static constexpr int k_max_side = 65536, k_max_tile = 4096, k_max_frames = 100000;
  static constexpr int64_t k_max_cells = int64_t{1} << 27;

  // Free-form provenance kept in the file (scene, resolution, spp, command).
  std::string note;

 private:
  size_t index(int frame, int column, int row) const;  // bounds-checked

  int m_width = 0, m_height = 0, m_tile = 4, m_frames = 1, m_columns = 0, m_rows = 0;
  std::vector<double> m_seconds;  // frames x rows x columns
};

}  // namespace farm
