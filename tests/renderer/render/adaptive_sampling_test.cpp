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
  // Samples 0 and 2 in every channel, and the unseen 0: (4 - 2^2 / 3) / 2 = 4/3 per channel; the
  // sum of variances 4 over n = 2 gives a standard error of sqrt(2); the intensity is 3.
  const Color sum{2, 2, 2}, sum_sq{4, 4, 4};
  CHECK(AdaptiveSchedule::error(sum, sum_sq, 2) == doctest::Approx(std::sqrt(2.0) / std::sqrt(3.0001)));
  // Three samples of 1: (3 - 3^2 / 4) / 3 = 1/4 per channel, not 0; one sample: no estimate (0,
  // but never converged on).
  CHECK(AdaptiveSchedule::error(Color{3, 3, 3}, Color{3, 3, 3}, 3) == doctest::Approx(0.5 / std::sqrt(3.0001)));
  CHECK(AdaptiveSchedule::error(sum, sum_sq, 1) == 0.0f);
  AdaptiveSchedule a(settings(64, 0.5f, 2));
  CHECK_FALSE(a.converged(sum, sum_sq, 1));
  CHECK_FALSE(a.converged(sum, sum_sq, 2));           // error ~0.82 >= 0.5
  CHECK(a.converged(Color{3, 3, 3}, Color{3, 3, 3}, 3));
  // Noisy samples (0 and 2 alike): the error falls as 1 / sqrt(n), nearly halving from 64 to 256;
  // equal ones (all 1): as 1 / n, a quarter.
  auto noisy = [](float n) { return AdaptiveSchedule::error(Color{n, n, n}, Color{2 * n, 2 * n, 2 * n}, static_cast<int>(n)); };
  auto equal = [](float n) { return AdaptiveSchedule::error(Color{n, n, n}, Color{n, n, n}, static_cast<int>(n)); };
  CHECK(noisy(256) / noisy(64) == doctest::Approx(0.5).epsilon(0.01));
  CHECK(equal(256) / equal(64) == doctest::Approx(0.25).epsilon(0.01));
}

TEST_CASE("adaptive sampling: n equal samples are not taken for no noise (one unseen sample of 0)") {
  // A light's rim pixel whose 32 samples all hit the light (33): over 33 samples with a 0 the
  // variance is 33^2 * 32 / 33 / 32 = 33 per channel, not 0.
  const float v = 33.0f;
  const Color sum{32 * v, 32 * v, 32 * v}, sum_sq{32 * v * v, 32 * v * v, 32 * v * v};
  CHECK(AdaptiveSchedule::error(sum, sum_sq, 32) == doctest::Approx(std::sqrt(3 * v / 32) / std::sqrt(1e-4 + 3 * v)));
  AdaptiveSchedule a(settings(1024, 0.02f));
  CHECK_FALSE(a.converged(sum, sum_sq, 32));
  // A black pixel stays free to stop: nothing it could miss.
  CHECK(a.converged(Color{0, 0, 0}, Color{0, 0, 0}, 32));
}

TEST_CASE("adaptive sampling: the preview's prediction of a pixel's samples") {
  AdaptiveSchedule a(settings(256, 0.1f));  // checks at 16, 32, 64, 128
  const Color grey{0.5f, 0.5f, 0.5f};
  // The prediction at c samples is error() of c samples with the same variance and mean.
  auto error_at = [&](float variance_of_mean, int n, int c) {
    const float per_sample = variance_of_mean * n;  // each channel's sample variance
    const float fc = static_cast<float>(c);
    Color sum = grey * fc, sum_sq{0, 0, 0};
    for (int k = 0; k < 3; ++k) sum_sq[k] = (fc - 1) * per_sample + sum[k] * sum[k] / fc;
    return AdaptiveSchedule::error(sum, sum_sq, c);
  };
  for (float v : {0.0f, 0.001f, 0.01f, 0.05f, 1.0f}) {
    CAPTURE(v);
    const int predicted = a.predicted_samples(v, grey, 8);
    if (predicted < 256) CHECK(error_at(v, 8, predicted) < 0.1f);
    if (predicted > 16) CHECK(error_at(v, 8, predicted / 2) >= 0.1f);
  }
  CHECK(a.predicted_samples(0.0f, Color{0, 0, 0}, 8) == 16);  // black: the first check
  CHECK(a.predicted_samples(1.0f, grey, 8) == 256);             // very noisy: spp
  CHECK(AdaptiveSchedule(settings(256, 0.0f)).predicted_samples(0.0f, grey, 8) == 256);  // off: every pixel takes spp
}

TEST_SUITE_END();
