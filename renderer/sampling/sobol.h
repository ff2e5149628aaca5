// Owen-scrambled, index-shuffled Sobol points: the building blocks of PixelSampler.
//
// Each pair of dimensions of a path (film position, light sample, BSDF sample, ...) takes the
// first two Sobol dimensions, a (0,2)-sequence: any 2^k consecutive points from index 0 put one
// point in each of the 2^k elementary intervals of every shape (1 x 2^k, 2 x 2^(k-1), ...), so a
// pixel's 16 samples are stratified over the unit square in all of those ways at once. Pairs are
// decorrelated from each other ("padding", as in Cycles' and pbrt-v4's padded samplers) by
// shuffling the sample index per pair, and each coordinate is Owen-scrambled with a seed of its
// own so that neighbouring pixels and different pairs do not share a pattern. Owen scrambling
// keeps the stratification; it is done with Laine and Karras' hash on reversed bits, as in
// Burley, "Practical Hash-based Owen Scrambling" (JCGT 2020), whose multipliers are used here.
//
// Everything is integer arithmetic: results depend on nothing but the arguments.
#pragma once

#include <array>
#include <cstdint>

namespace rt::sobol {

// Murmur3's 64-bit finaliser (a bijective avalanche mix).
inline uint64_t mix64(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

// Murmur3's 32-bit finaliser.
inline uint32_t mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

inline uint32_t reverse_bits(uint32_t x) {
  x = (x << 16) | (x >> 16);
  x = ((x & 0x00ff00ffu) << 8) | ((x & 0xff00ff00u) >> 8);
  x = ((x & 0x0f0f0f0fu) << 4) | ((x & 0xf0f0f0f0u) >> 4);
  x = ((x & 0x33333333u) << 2) | ((x & 0xccccccccu) >> 2);
  x = ((x & 0x55555555u) << 1) | ((x & 0xaaaaaaaau) >> 1);
  return x;
}

// A bijection of 32-bit words in which output bit i depends only on input bits 0..i (adding a
// seed carries upwards; x ^= x * even only mixes lower bits into higher ones). Restricted to the
// low k bits it is therefore also a bijection of [0, 2^k).
inline uint32_t laine_karras(uint32_t x, uint32_t seed) {
  x += seed;
  x ^= x * 0x6c50b47cu;
  x ^= x * 0xb82f1e52u;
  x ^= x * 0xc7afe638u;
  x ^= x * 0x8d22f6e6u;
  return x;
}

// Owen scrambling of a 32-bit fixed-point value in [0, 1), given with its bits reversed: each
// digit is flipped depending on the digits above it only, which keeps every elementary
// interval's point count. Taking the value reversed saves the reversal that would cancel.
inline uint32_t owen_scramble_reversed(uint32_t reversed_value, uint32_t seed) {
  return reverse_bits(laine_karras(reversed_value, seed));
}

// A pseudo-random permutation of [0, n): element i (< n) of the permutation `seed`. The index
// is Owen-scrambled as a k-bit number, 2^k the smallest power of two >= n (laine_karras on the
// reversed bits: bit j of the result depends on i's bits j..k-1, so the map is a bijection of
// [0, 2^k) in which every bit of i reaches the low bits), and cycle-walked back into [0, n)
// (terminates: the walk follows i's cycle, which returns to i). This is Burley's index shuffle;
// a four-round Feistel network did the same job at six times the cost (the sampler's time was
// mostly shuffling). A triangular map from the low bits up (laine_karras on i itself) must not be
// used: it keeps i's bit 0 in every dimension up to a constant, correlating all dimensions.
inline uint32_t shuffle_index(uint32_t i, uint32_t n, uint32_t seed) {
  if (n <= 1 || i >= n) return i;
  const uint32_t mask = ~0u >> __builtin_clz(n - 1);  // 2^k - 1
  do {
    i = owen_scramble_reversed(reverse_bits(i), seed) & mask;
  } while (i >= n);
  return i;
}

// The first four dimensions of the Sobol sequence (Joe and Kuo's direction numbers: primitive
// polynomials 1, x + 1, x^2 + x + 1, x^3 + x + 1 with initial m = {1}, {1}, {1, 3}, {1, 3, 1}).
// Dimensions 0 and 1 together are a (0,2)-sequence. Each column is stored bit-reversed, so that
// the Owen scramble (reverse, hash, reverse) needs one reversal instead of three.
constexpr int k_dimensions = 4;

// Column k of each dimension's generator matrix (the direction number of index bit k), for
// all four dimensions side by side.
struct ReversedColumns {
  uint32_t v[32][k_dimensions];
};

constexpr uint32_t constexpr_reverse_bits(uint32_t x) {
  uint32_t r = 0;
  for (int b = 0; b < 32; ++b) r |= ((x >> b) & 1u) << (31 - b);
  return r;
}

constexpr ReversedColumns make_reversed_columns() {
  ReversedColumns c{};
  uint32_t v[32] = {};
  for (int k = 0; k < 32; ++k) c.v[k][0] = 1u << k;  // van der Corput, already reversed
  // dimension 1: degree 1, v_k = v_{k-1} ^ (v_{k-1} >> 1)
  v[0] = 1u << 31;
  for (int k = 1; k < 32; ++k) v[k] = v[k - 1] ^ (v[k - 1] >> 1);
  for (int k = 0; k < 32; ++k) c.v[k][1] = constexpr_reverse_bits(v[k]);
  // dimension 2: degree 2, a = 1: v_k = v_{k-1} ^ v_{k-2} ^ (v_{k-2} >> 2)
  v[0] = 1u << 31;
  v[1] = 3u << 30;
  for (int k = 2; k < 32; ++k) v[k] = v[k - 1] ^ v[k - 2] ^ (v[k - 2] >> 2);
  for (int k = 0; k < 32; ++k) c.v[k][2] = constexpr_reverse_bits(v[k]);
  // dimension 3: degree 3, a = 1 (x^3 + x + 1): v_k = v_{k-2} ^ v_{k-3} ^ (v_{k-3} >> 3)
  v[0] = 1u << 31;
  v[1] = 3u << 30;
  v[2] = 1u << 29;
  for (int k = 3; k < 32; ++k) v[k] = v[k - 2] ^ v[k - 3] ^ (v[k - 3] >> 3);
  for (int k = 0; k < 32; ++k) c.v[k][3] = constexpr_reverse_bits(v[k]);
  return c;
}

inline constexpr ReversedColumns k_reversed_columns = make_reversed_columns();

// Sobol dimension `dim` (0..3) of point i, bit-reversed.
inline uint32_t sobol_reversed(int dim, uint32_t i) {
  if (dim == 0) return i;  // van der Corput: the reversed value is the index itself
  uint32_t r = 0;
  for (; i != 0; i &= i - 1) r ^= k_reversed_columns.v[__builtin_ctz(i)][dim];
  return r;
}

// All four dimensions of point i, bit-reversed, in one pass over i's set bits.
inline std::array<uint32_t, k_dimensions> sobol_reversed4(uint32_t i) {
  std::array<uint32_t, k_dimensions> r{};
  for (; i != 0; i &= i - 1) {
    const uint32_t* column = k_reversed_columns.v[__builtin_ctz(i)];
    for (int d = 0; d < k_dimensions; ++d) r[d] ^= column[d];
  }
  return r;
}

// Sobol dimension `dim` (0..3) of point i, 32-bit fixed point, unscrambled.
inline uint32_t sobol_point(int dim, uint32_t i) { return reverse_bits(sobol_reversed(dim, i)); }

// 24 high bits -> [0, 1) exactly representable in float, so never 1.0f.
inline float to_unit_float(uint32_t v) { return static_cast<float>(v >> 8) * (1.0f / 16777216.0f); }

}  // namespace rt::sobol
