// Counter-based random numbers: a pixel sample's numbers depend only on
// (seed, frame, x, y, sample index, dimension), never on threads, tiles or call order.
// This is what makes any tiling of the image byte-identical to rendering it whole.
#pragma once

#include <cmath>
#include <cstdint>

#include "math/vec.h"

namespace rt {

// Murmur3's 64-bit finaliser: a bijective avalanche mix.
inline uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

inline uint64_t hash_combine(uint64_t a, uint64_t b) { return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ULL)); }

// 24 high bits -> [0, 1) exactly representable in float, so never 1.0f.
inline float u64_to_unit_float(uint64_t h) { return static_cast<float>(h >> 40) * (1.0f / 16777216.0f); }

class PixelSampler {
 public:
  PixelSampler(uint64_t seed, int frame, int x, int y, int sample_index, int spp)
      : m_sample(sample_index), m_spp(spp) {
    uint64_t h = hash_combine(seed, static_cast<uint64_t>(frame));
    h = hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(x)));
    m_pixel_key = hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(y)));
    m_key = hash_combine(m_pixel_key, static_cast<uint64_t>(sample_index));
  }

  // Next independent uniform number in [0, 1).
  float next() { return u64_to_unit_float(hash_combine(m_key, m_dimension++)); }
  Vec2 next2() {
    float a = next();
    return {a, next()};
  }

  // Low-discrepancy 2D point for the pixel's `which`-th stratified pair (0 = film, 1 = lens):
  // the R2 sequence (Roberts 2018) over the pixel's samples, shifted per pixel by a hashed
  // Cranley-Patterson rotation so neighbouring pixels do not share a pattern.
  Vec2 stratified2(int which) const {
    constexpr double g = 1.32471795724474602596;  // plastic number
    constexpr double a1 = 1.0 / g, a2 = 1.0 / (g * g);
    uint64_t shift_key = hash_combine(m_pixel_key, 0xabcdef00ULL + static_cast<uint64_t>(which));
    double sx = (shift_key >> 40) * (1.0 / 16777216.0);
    double sy = ((shift_key >> 16) & 0xffffff) * (1.0 / 16777216.0);
    double fx = sx + a1 * m_sample, fy = sy + a2 * m_sample;
    fx -= std::floor(fx);
    fy -= std::floor(fy);
    // Clamp below 1 after the float conversion (double 0.99999999 would round up to 1.0f).
    return {std::fmin(static_cast<float>(fx), 0x1.fffffep-1f), std::fmin(static_cast<float>(fy), 0x1.fffffep-1f)};
  }

 private:
  uint64_t m_pixel_key = 0;
  uint64_t m_key = 0;
  uint64_t m_dimension = 0;
  int m_sample = 0;
  int m_spp = 1;
};

}  // namespace rt
