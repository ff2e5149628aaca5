// Pixel filters by importance sampling: offsets stay in the support, follow the filter's
// shape, and a wider filter blends an edge into the neighbouring pixels only.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "renderer/render_helpers.h"
#include "sampling/pixel_filter.h"

TEST_SUITE_BEGIN("unit");

TEST_CASE("pixel filter: the shared sampler is built once per filter and width, and equals a fresh one") {
  using rt::PixelFilter;
  const rt::PixelFilterSampler& a = rt::PixelFilterSampler::shared(PixelFilter::gaussian, 1.5f);
  CHECK(&a == &rt::PixelFilterSampler::shared(PixelFilter::gaussian, 1.5f));
  CHECK(&a != &rt::PixelFilterSampler::shared(PixelFilter::gaussian, 2.0f));
  CHECK(&a != &rt::PixelFilterSampler::shared(PixelFilter::blackman_harris, 1.5f));
  const rt::PixelFilterSampler fresh(PixelFilter::gaussian, 1.5f);
  for (int i = 0; i <= 1000; ++i) CHECK(a.offset(i / 1000.0f) == fresh.offset(i / 1000.0f));  // bit for bit
}

TEST_CASE("pixel filter: offsets cover the support and follow the filter's weight") {
  using rt::PixelFilter;
  for (PixelFilter f : {PixelFilter::box, PixelFilter::gaussian, PixelFilter::blackman_harris}) {
    const float width = f == PixelFilter::box ? 1.0f : 1.5f;
    rt::PixelFilterSampler sampler(f, width);
    CAPTURE(static_cast<int>(f));
    // Histogram of offsets for evenly spread u against the normalised weight in 10 bins.
    const int n = 100000, bins = 10;
    std::vector<double> histogram(bins, 0.0), expected(bins, 0.0);
    float previous = -1e9f;
    for (int i = 0; i < n; ++i) {
      float x = sampler.offset((i + 0.5f) / n);
      CHECK(x >= -0.5f * width);
      CHECK(x <= 0.5f * width);
      CHECK(x >= previous);  // monotone in u: stratified u stay stratified
      previous = x;
      histogram[std::min(bins - 1, static_cast<int>((x / width + 0.5f) * bins))] += 1.0 / n;
    }
    double total = 0;
    for (int b = 0; b < bins; ++b) {
      for (int k = 0; k < 100; ++k)
        expected[b] += rt::PixelFilterSampler::weight(f, width, width * ((b + (k + 0.5f) / 100) / bins - 0.5f));
      total += expected[b];
    }
    for (int b = 0; b < bins; ++b) CHECK(histogram[b] == doctest::Approx(expected[b] / total).epsilon(0.01).scale(1));
  }
  // The Blackman-Harris window is 1 in the middle and almost 0 at the edges.
  CHECK(rt::PixelFilterSampler::weight(rt::PixelFilter::blackman_harris, 1.5f, 0.0f) == doctest::Approx(1.0).epsilon(1e-4));
  CHECK(rt::PixelFilterSampler::weight(rt::PixelFilter::blackman_harris, 1.5f, 0.75f) < 1e-4);
}

TEST_CASE("pixel filter: a sharp edge stays in one pixel with the box, spreads to its neighbours with Blackman-Harris") {
  // An emitter covers exactly the left half of an 8-pixel-wide orthographic-like view: columns
  // 0..3 see it, 4..7 see black. The camera is far away with a narrow field so the edge is at
  // the pixel boundary between columns 3 and 4.
  auto render_row = [](const std::string& filter) {
    auto scene = test_render::scene_from(R"(
[render]
width = 8
height = 2
spp = 256
integrator = "path"
max_depth = 1
)" + filter + R"(
[camera]
position = [0, 0, 1000]
look_at = [0, 0, 0]
fov = 0.458366
[[material]]
name = "light"
type = "emissive"
emission = 1
[[object]]
type = "quad"
material = "light"
corner = [-100, -100, 0]
edge_u = [100, 0, 0]
edge_v = [0, 200, 0]
)");
    auto img = test_render::render_full(*scene);
    std::vector<double> row;
    for (int x = 0; x < 8; ++x) row.push_back(img[4 * x]);
    return row;
  };
  auto box = render_row("filter = \"box\"");
  auto bh = render_row("filter = \"blackman-harris\"\nfilter_width = 1.5");
  for (int x = 0; x < 4; ++x) CHECK(box[x] == doctest::Approx(1.0));
  for (int x = 4; x < 8; ++x) CHECK(box[x] == doctest::Approx(0.0));
  // Blackman-Harris 1.5 px reaches a quarter pixel into each neighbour: the share p of samples
  // whose offset passes +0.5 px crosses the edge (0.6%); columns two away see nothing.
  double inside = 0, beyond = 0;
  for (int k = 0; k < 100000; ++k) {
    float x = -0.75f + 1.5f * (k + 0.5f) / 100000;
    double w = rt::PixelFilterSampler::weight(rt::PixelFilter::blackman_harris, 1.5f, x);
    (x > 0.5f ? beyond : inside) += w;
  }
  const double p = beyond / (inside + beyond);
  CHECK(p > 0.005);
  CHECK(bh[2] == doctest::Approx(1.0));
  CHECK(bh[5] == doctest::Approx(0.0));
  CHECK(bh[3] == doctest::Approx(1.0 - p).epsilon(0.006));
  CHECK(bh[4] == doctest::Approx(p).epsilon(0.006).scale(1));
}

TEST_SUITE_END();
