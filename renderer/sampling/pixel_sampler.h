// Counter-based sample numbers: a pixel sample's numbers depend only on
// (seed, frame, x, y, sample index, spp, dimension), never on threads, tiles or call order.
// This is what makes any tiling of the image byte-identical to rendering it whole.
#pragma once

#include <array>
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

// The numbers of one pixel sample. Every call takes the next dimension slot: one number, a
// pair or a quadruple of a scrambled 4D Sobol point (sampling/sobol.h) of this sample's index
// among the pixel's `spp`, so the pixel's samples are stratified in every number and the first
// two of a pair or quadruple form a (0,2)-net, at any spp (best at powers of two), whatever the
// tiling. Slots are decorrelated by shuffling the index per slot; a quadruple costs one shuffle,
// which is most of a slot's cost.
class PixelSampler {
 public:
  // `pixel_key_value` from pixel_key(seed, frame, x, y); `sample_index` in [0, spp).
  PixelSampler(uint64_t pixel_key_value, int sample_index, int spp)
      : m_pixel_key(pixel_key_value),
        m_sample(static_cast<uint32_t>(sample_index)),
        m_spp(static_cast<uint32_t>(spp > 0 ? spp : 1)) {}

  float next() {
    Slot s = slot(m_dimension++);
    return sobol::to_unit_float(sobol::owen_scramble_reversed(sobol::sobol_reversed(0, s.index), s.seed));
  }
  Vec2 next2() { return pair(m_dimension++); }
  // Four numbers; the first two are a (0,2)-net pair (give them to a 2D warp).
  std::array<float, 4> next4() {
    if (m_dimension >= k_last_stratified_slot) {
      // Deep in a path (Russian roulette territory) stratification buys little and the
      // scrambled points cost ten times a hash: independent numbers from two hashes.
      uint64_t a = mix64(m_pixel_key ^ (static_cast<uint64_t>(m_dimension++) << 32 | m_sample));
      uint64_t b = mix64(a + 0x9e3779b97f4a7c15ULL);
      return {u64_to_unit_float(a), u64_to_unit_float(a << 24), u64_to_unit_float(b), u64_to_unit_float(b << 24)};
    }
    Slot s = slot(m_dimension++);
    const std::array<uint32_t, 4> reversed = sobol::sobol_reversed4(s.index);
    // The pair gets Owen scrambles (seeds s.seed + d * odd: distinct, no serial hashing); the
    // last two numbers, used for 1D choices (light, lobe, roulette), a random digital shift,
    // which keeps their stratification at a third of the cost.
    std::array<float, 4> u;
    for (int d = 0; d < 2; ++d)
      u[d] = sobol::to_unit_float(sobol::owen_scramble_reversed(reversed[d], s.seed + static_cast<uint32_t>(d) * 0x9e3779b9u));
    const uint32_t shift = static_cast<uint32_t>(s.shift_seed);
    u[2] = sobol::to_unit_float(sobol::reverse_bits(reversed[2]) ^ shift);
    u[3] = sobol::to_unit_float(sobol::reverse_bits(reversed[3]) ^ sobol::mix32(shift));
    return u;
  }

  // The camera's pairs, kept apart from the integrator's: 0 = position in the pixel, 1 = lens.
  Vec2 camera2(int which) const { return pair(static_cast<uint32_t>(which)); }

 private:
  static constexpr uint32_t k_first_integrator_dimension = 2;
  // next4() slots from here on are independent hashes: the path tracer's first three vertices
  // (two slots each) are stratified.
  static constexpr uint32_t k_last_stratified_slot = k_first_integrator_dimension + 6;

  struct Slot {
    uint32_t index;       // this sample's shuffled index for the slot
    uint32_t seed;        // the first number's scramble; the others' are derived from it
    uint32_t shift_seed;  // next4's digital shifts
  };
  // One 64-bit hash per slot: its low half seeds the index shuffle, its high half the scrambles.
  Slot slot(uint32_t dimension) const {
    uint64_t h = mix64(m_pixel_key ^ (static_cast<uint64_t>(dimension + 1) * 0x9e3779b97f4a7c15ULL));
    uint32_t seed = static_cast<uint32_t>(h >> 32);
    return {sobol::shuffle_index(m_sample, m_spp, static_cast<uint32_t>(h)), seed, seed * 0x2c1b3c6du + 0x297a2d39u};
  }
  Vec2 pair(uint32_t dimension) const {
    Slot s = slot(dimension);
    return {sobol::to_unit_float(sobol::owen_scramble_reversed(sobol::sobol_reversed(0, s.index), s.seed)),
            sobol::to_unit_float(sobol::owen_scramble_reversed(sobol::sobol_reversed(1, s.index),
                                                               sobol::mix32(s.seed + 0x5bd1e995u)))};
  }

  uint64_t m_pixel_key = 0;
  uint32_t m_sample = 0;
  uint32_t m_spp = 1;
  uint32_t m_dimension = k_first_integrator_dimension;
};

}  // namespace rt
