// Counter-based sample numbers: a pixel sample's numbers depend only on
// (seed, frame, x, y, sample index, spp, dimension), never on threads, tiles or call order.
// This is what makes any tiling of the image byte-identical to rendering it whole.
#pragma once

#include <cmath>
#include <cstdint>

#include "math/vec.h"
#include "sampling/sobol.h"

namespace rt {

using sobol::mix64;

inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ULL)); }

// 24 high bits -> [0, 1) exactly representable in float, so never 1.0f.
inline float u64_to_unit_float(uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }

// The per-pixel part of every sample's key: hashed once per pixel, not once per sample.
inline uint64_t pixel_key(uint64_t seed, int frame, int x, int y) {
  uint64_t h = hash_combine(seed, static_cast<uint64_t>(frame));
  h = hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(x)));
  return hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(y)));
}

// The numbers of one pixel sample. Every call takes the next dimension (a pair for next2());
// its value is a scrambled Sobol point (sampling/sobol.h) of this sample's index among the
// pixel's `spp`, so the pixel's samples are stratified in every dimension and every pair, at any
// spp (best at powers of two), whatever the tiling.
class PixelSampler {
 public:
  // `pixel_key_value` from pixel_key(seed, frame, x, y); `sample_index` in [0, spp).
  PixelSampler(uint64_t pixel_key_value, int sample_index, int spp)
      : m_pixel_key(pixel_key_value),
        m_sample(static_cast<uint32_t>(sample_index)),
        m_spp(static_cast<uint32_t>(spp > 0 ? spp : 1)) {}

  float next() {
    Scramble s = scramble(m_dimension++);
    return sobol::to_unit_float(sobol::scrambled_dimension0(s.index, s.seed_x));
  }
  Vec2 next2() { return pair(m_dimension++); }

  // The camera's pairs, kept apart from the integrator's: 0 = position in the pixel, 1 = lens.
  Vec2 camera2(int which) const { return pair(static_cast<uint32_t>(which)); }

 private:
  static constexpr uint32_t k_first_integrator_dimension = 2;

  struct Scramble {
    uint32_t index;  // this sample's shuffled index for the dimension
    uint32_t seed_x, seed_y;
  };
  // One 64-bit hash per dimension: its low half seeds the index shuffle, its high half the
  // first coordinate's scramble; the second coordinate's seed is the first's, mixed again.
  Scramble scramble(uint32_t dimension) const {
    uint64_t h = mix64(m_pixel_key ^ (static_cast<uint64_t>(dimension + 1) * 0x9e3779b97f4a7c15ULL));
    uint32_t seed_x = static_cast<uint32_t>(h >> 32);
    return {sobol::shuffle_index(m_sample, m_spp, static_cast<uint32_t>(h)), seed_x, sobol::mix32(seed_x ^ 0x5bd1e995u)};
  }
  Vec2 pair(uint32_t dimension) const {
    Scramble s = scramble(dimension);
    return {sobol::to_unit_float(sobol::scrambled_dimension0(s.index, s.seed_x)),
            sobol::to_unit_float(sobol::scrambled_dimension1(s.index, s.seed_y))};
  }

  uint64_t m_pixel_key = 0;
  uint32_t m_sample = 0;
  uint32_t m_spp = 1;
  uint32_t m_dimension = k_first_integrator_dimension;
};

}  // namespace rt
