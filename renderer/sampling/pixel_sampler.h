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

// The per-pixel part of every sample's key: hashed once per pixel, not once per sample.
inline uint64_t pixel_key(uint64_t seed, int frame, int x, int y) {
  uint64_t h = hash_combine(seed, static_cast<uint64_t>(frame));
  h = hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(x)));
  return hash_combine(h, static_cast<uint64_t>(static_cast<uint32_t>(y)));
}

class PixelSampler {
 public:
  // `pixel_key_value` from pixel_key(seed, frame, x, y).
  PixelSampler(uint64_t pixel_key_value, int sample_index)
      : m_pixel_key(pixel_key_value),
        m_key(hash_combine(pixel_key_value, static_cast<uint64_t>(sample_index))),
        m_sample(static_cast<uint32_t>(sample_index)) {}

  // Next independent uniform number in [0, 1).
  float next() { return u64_to_unit_float(hash_combine(m_key, m_dimension++)); }
  Vec2 next2() {
    float a = next();
    return {a, next()};
  }

  // Low-discrepancy 2D point for the pixel's `which`-th stratified pair (0 = film, 1 = lens):
  // the R2 sequence (Roberts 2018) over the pixel's samples, shifted per pixel by a hashed
  // Cranley-Patterson rotation so neighbouring pixels do not share a pattern. Computed in
  // 32-bit fixed point: wrap-around is the "mod 1", and no float rounding mode is involved.
  Vec2 stratified2(int which) const {
    constexpr uint32_t a1 = 3242174889u;  // 2^32 / g, g = 1.32471795724474602596 (plastic number)
    constexpr uint32_t a2 = 2447445414u;  // 2^32 / g^2
    uint64_t shift_key = hash_combine(m_pixel_key, 0xabcdef00ULL + static_cast<uint64_t>(which));
    uint32_t fx = static_cast<uint32_t>(shift_key) + a1 * m_sample;
    uint32_t fy = static_cast<uint32_t>(shift_key >> 32) + a2 * m_sample;
    return {static_cast<float>(fx >> 8) * (1.0f / 16777216.0f), static_cast<float>(fy >> 8) * (1.0f / 16777216.0f)};
  }

 private:
  uint64_t m_pixel_key = 0;
  uint64_t m_key = 0;
  uint64_t m_dimension = 0;
  uint32_t m_sample = 0;
};

}  // namespace rt
