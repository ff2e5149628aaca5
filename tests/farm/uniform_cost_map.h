// A cost map for simulator tests: a width x height map where every tile of `tile` px costs the
// same, so a block of S x S costs exactly S*S/(tile*tile) * tile_cost.
#pragma once

#include "costs/cost_map.h"

inline farm::CostMap uniform_map(int width, int height, int tile, double tile_cost) {
  farm::CostMap m(width, height, tile, 1);
  for (int r = 0; r < m.rows(); ++r)
    for (int c = 0; c < m.columns(); ++c) m.at(1, c, r) = tile_cost;
  return m;
}
