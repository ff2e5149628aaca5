// The adaptive sampling rule (render/adaptive_sampling.h): when a pixel is checked, the error
// estimate's value on known samples, and when the rule is off.
#include <doctest/doctest.h>

#include <cmath>

#include "render/adaptive_sampling.h"

TEST_SUITE_BEGIN("unit");

using rt::AdaptiveSchedule;
using rt::Color;

namespace {

rt::RenderSettings settings(int spp, float threshold, int min_samples = 0) {
  rt::RenderSettings s;
  s.spp = spp;
  s.noise_threshold = threshold;
  s.min_samples = min_samples;
  return s;
}

}  // namespace

TEST_CASE("adaptive sampling: checks at the first count and each doubling, never at spp") {
  AdaptiveSchedule a(settings(100, 0.01f, 8));
  CHECK(a.on());
  for (int n = 1; n <= 100; ++n) {
    CAPTURE(n);
    CHECK(a.checks_at(n) == (n == 8 || n == 16 || n == 32 || n == 64));
  }
  // Automatic first check: the power of two at or above sqrt(spp), at least 4, at most spp.
  CHECK(AdaptiveSchedule::automatic_first_check(1024) == 32);
  CHECK(AdaptiveSchedule::automatic_first_check(1000) == 32);
  CHECK(AdaptiveSchedule::automatic_first_check(64) == 8);
  CHECK(AdaptiveSchedule::automatic_first_check(16) == 4);
  CHECK(AdaptiveSchedule::automatic_first_check(2) == 2);
  CHECK(AdaptiveSchedule(settings(1024, 0.01f)).first_check() == 32);
  // Off: no threshold, or a first check at spp or beyond (nothing to stop early).
  CHECK_FALSE(AdaptiveSchedule(settings(64, 0.0f)).on());
  CHECK_FALSE(AdaptiveSchedule(settings(8, 0.1f, 8)).on());
  CHECK_FALSE(AdaptiveSchedule(settings(8, 0.1f, 20)).on());
  CHECK_FALSE(AdaptiveSchedule(settings(64, 0.0f)).checks_at(8));
}

TEST_CASE("adaptive sampling: the error is the standard error over the square root of the intensity") {
  // Samples 0 and 2 in every channel: mean 1, unbiased variance 2 per channel; sum of variances
  // 6 over n = 2 gives a standard error of sqrt(3); the intensity is 3.
  const Color sum{2, 2, 2}, sum_sq{4, 4, 4};
  CHECK(AdaptiveSchedule::error(sum, sum_sq, 2) == doctest::Approx(std::sqrt(3.0) / std::sqrt(3.0001)));
  // Identical samples: no error; one sample: no estimate (0, but never converged on).
  CHECK(AdaptiveSchedule::error(Color{3, 3, 3}, Color{3, 3, 3}, 3) == 0.0f);
  CHECK(AdaptiveSchedule::error(sum, sum_sq, 1) == 0.0f);
  AdaptiveSchedule a(settings(64, 0.5f, 2));
  CHECK_FALSE(a.converged(sum, sum_sq, 1));
  CHECK_FALSE(a.converged(sum, sum_sq, 2));           // error ~1.0 >= 0.5
  CHECK(a.converged(Color{3, 3, 3}, Color{3, 3, 3}, 3));
  // The same spread in a brighter pixel is less noise relative to it: it converges first.
  const Color bright{200, 200, 200}, bright_sq{20000 + 2, 20000 + 2, 20000 + 2};  // 100 +- 1
  CHECK(AdaptiveSchedule::error(bright, bright_sq, 2) < AdaptiveSchedule::error(sum, sum_sq, 2));
}

TEST_CASE("adaptive sampling: the preview's prediction of a pixel's samples, and the error from its variance pass") {
  AdaptiveSchedule a(settings(256, 0.1f));  // checks at 16, 32, 64, 128
  CHECK(a.predicted_samples(0.05f, 8) == 16);   // under the threshold already: the first check
  CHECK(a.predicted_samples(0.3f, 8) == 128);   // 0.3 * sqrt(8 / 128) = 0.075
  CHECK(a.predicted_samples(0.21f, 8) == 64);   // 0.21 * sqrt(8 / 64) = 0.074 (at 32: 0.105, not under)
  CHECK(a.predicted_samples(1.0f, 8) == 256);   // never under before spp
  CHECK(AdaptiveSchedule(settings(256, 0.0f)).predicted_samples(0.0f, 8) == 256);  // off: every pixel takes spp
  // The variance pass holds the variance of the mean averaged over R, G, B: sum_c var_c / n / 3.
  const Color sum{2, 2, 2}, sum_sq{4, 4, 4};  // n = 2: var_c = 2, the variance pass 2 / 2 = 1
  CHECK(AdaptiveSchedule::error_from_variance(1.0f, sum / 2.0f) ==
        doctest::Approx(AdaptiveSchedule::error(sum, sum_sq, 2)));
}

TEST_SUITE_END();
