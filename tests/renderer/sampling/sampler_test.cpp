// The pixel sampler: stratified in every dimension and every pair, independent across
// dimensions and pixels, and a pure function of its inputs.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <vector>

#include "sampling/pixel_sampler.h"

TEST_SUITE_BEGIN("unit");

namespace {

// The first `dimensions` 1D values and then one pair of each of `spp` samples of one pixel.
struct PixelValues {
  std::vector<std::vector<float>> one_d;  // [dimension][sample]
  std::vector<rt::Vec2> pair;             // the pair after the 1D values
};

PixelValues draw(uint64_t key, int spp, int dimensions) {
  PixelValues v;
  v.one_d.assign(dimensions, std::vector<float>(spp));
  for (int s = 0; s < spp; ++s) {
    rt::PixelSampler sampler(key, s, spp);
    for (int d = 0; d < dimensions; ++d) v.one_d[d][s] = sampler.next();
    v.pair.push_back(sampler.next2());
  }
  return v;
}

}  // namespace

TEST_CASE("sampler: shuffle_index is a permutation of 0..n-1 for any n") {
  for (uint32_t n : {1u, 2u, 3u, 5u, 16u, 17u, 100u, 1000u, 1024u, 4097u}) {
    for (uint32_t seed : {0u, 1u, 0xdeadbeefu}) {
      std::set<uint32_t> seen;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t j = rt::sobol::shuffle_index(i, n, seed);
        CHECK(j < n);
        seen.insert(j);
      }
      CHECK(seen.size() == n);
    }
  }
}

TEST_CASE("sampler: each 1D dimension puts one of the pixel's 2^k samples in each interval of width 2^-k") {
  for (int spp : {4, 16, 64, 256}) {
    PixelValues v = draw(rt::pixel_key(3, 1, 17, 5), spp, 12);
    for (const auto& values : v.one_d) {
      std::set<int> strata;
      for (float u : values) {
        CHECK(u >= 0.0f);
        CHECK(u < 1.0f);
        strata.insert(static_cast<int>(u * spp));
      }
      CHECK(strata.size() == static_cast<size_t>(spp));
    }
  }
}

TEST_CASE("sampler: a pair is a (0,k,2)-net: one sample in every elementary interval of area 2^-k") {
  const int k = 6, spp = 1 << k;
  PixelValues v = draw(rt::pixel_key(0, 1, 3, 9), spp, 5);
  for (int cols_log2 = 0; cols_log2 <= k; ++cols_log2) {
    const int cols = 1 << cols_log2, rows = spp / cols;
    std::set<int> cells;
    for (rt::Vec2 p : v.pair) cells.insert(static_cast<int>(p.x * cols) * rows + static_cast<int>(p.y * rows));
    CHECK_MESSAGE(cells.size() == static_cast<size_t>(spp), cols << " x " << rows << " intervals");
  }
}

TEST_CASE("sampler: dimensions are independent of each other within a pixel") {
  // For two independent dimensions, the share of a pixel's 16 samples that fall in the same half
  // of [0, 1) in both is binomial: mean 1/2, variance 1/64. Burley's nested index shuffle keeps
  // one structure: samples i and i^1 lie in opposite halves in every dimension, which doubles that
  // variance (8 independent pairs instead of 16 samples; measured 0.031-0.035). A shuffle that
  // kept the index's low bit (as a first version did) makes the share 0 or 1: variance 1/4.
  const int spp = 16, dimensions = 10, pixels = 400;
  std::vector<std::vector<double>> sum_sq(dimensions, std::vector<double>(dimensions, 0));
  std::vector<std::vector<double>> sum(dimensions, std::vector<double>(dimensions, 0));
  for (int p = 0; p < pixels; ++p) {
    PixelValues v = draw(rt::pixel_key(0, 1, p % 20, p / 20), spp, dimensions);
    for (int a = 0; a < dimensions; ++a)
      for (int b = a + 1; b < dimensions; ++b) {
        int same = 0;
        for (int s = 0; s < spp; ++s) same += (v.one_d[a][s] < 0.5f) == (v.one_d[b][s] < 0.5f);
        double deviation = static_cast<double>(same) / spp - 0.5;
        sum[a][b] += deviation;
        sum_sq[a][b] += deviation * deviation;
      }
  }
  for (int a = 0; a < dimensions; ++a)
    for (int b = a + 1; b < dimensions; ++b) {
      CHECK_MESSAGE(std::fabs(sum[a][b] / pixels) < 0.03, "dimensions " << a << " and " << b);
      CHECK_MESSAGE(sum_sq[a][b] / pixels < 3.0 / 64, "dimensions " << a << " and " << b);
    }
}

TEST_CASE("sampler: a smooth integrand converges faster than independent random numbers would") {
  // f(x, y) = x y over the unit square, mean 1/4. Independent numbers: error ~ 0.22 / sqrt(n).
  const int spp = 256, pixels = 64;
  double worst = 0;
  for (int p = 0; p < pixels; ++p) {
    PixelValues v = draw(rt::pixel_key(9, 2, p, 0), spp, 3);
    double sum = 0;
    for (rt::Vec2 q : v.pair) sum += static_cast<double>(q.x) * q.y;
    worst = std::max(worst, std::fabs(sum / spp - 0.25));
  }
  CHECK(worst < 0.22 / 16 / 4);  // four times better than one random standard deviation, for every pixel
}

TEST_CASE("sampler: values depend only on (key, sample, spp, dimension), pixels differ") {
  rt::PixelSampler a(rt::pixel_key(1, 1, 2, 3), 5, 16), b(rt::pixel_key(1, 1, 2, 3), 5, 16);
  rt::PixelSampler other_pixel(rt::pixel_key(1, 1, 2, 4), 5, 16);
  CHECK(a.camera2(0).x == b.camera2(0).x);
  for (int d = 0; d < 20; ++d) CHECK(a.next() == b.next());
  CHECK(a.camera2(0).x != other_pixel.camera2(0).x);
}

TEST_CASE("sampler: next4's numbers are each stratified and its first two form a (0,k,2)-net") {
  const int k = 5, spp = 1 << k;
  const uint64_t key = rt::pixel_key(4, 1, 8, 8);
  std::vector<std::array<float, 4>> u;
  for (int s = 0; s < spp; ++s) {
    rt::PixelSampler sampler(key, s, spp);
    (void)sampler.next4();
    u.push_back(sampler.next4());  // the second slot: a different shuffle and scramble
  }
  for (int d = 0; d < 4; ++d) {
    std::set<int> strata;
    for (const auto& q : u) strata.insert(static_cast<int>(q[d] * spp));
    CHECK_MESSAGE(strata.size() == static_cast<size_t>(spp), "number " << d);
  }
  for (int cols_log2 = 0; cols_log2 <= k; ++cols_log2) {
    const int cols = 1 << cols_log2, rows = spp / cols;
    std::set<int> cells;
    for (const auto& q : u) cells.insert(static_cast<int>(q[0] * cols) * rows + static_cast<int>(q[1] * rows));
    CHECK_MESSAGE(cells.size() == static_cast<size_t>(spp), cols << " x " << rows << " intervals");
  }
}

TEST_CASE("sampler: the Sobol generator matches the sequence's known first points") {
  // Points 1..4 of Sobol dimensions 0..3 (Joe-Kuo direction numbers, index order), in 1/8ths.
  const int expected[4][4] = {{4, 2, 6, 1}, {4, 6, 2, 5}, {4, 6, 2, 3}, {4, 6, 2, 1}};
  for (int d = 0; d < 4; ++d)
    for (uint32_t i = 1; i <= 4; ++i)
      CHECK_MESSAGE(rt::sobol::sobol_point(d, i) == static_cast<uint32_t>(expected[d][i - 1]) << 29,
                    "dimension " << d << " point " << i);
}

TEST_SUITE_END();
