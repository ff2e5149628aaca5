// Physical sanity checks with known answers. Each can fail: tolerances are a few percent,
// far below the error a wrong BSDF, pdf or MIS weight produces.
#include <doctest/doctest.h>

#include "test_paths.h"
#include "image/image_io.h"
#include "renderer/render_helpers.h"

#include <cmath>
#include <filesystem>
#include <vector>

TEST_SUITE_BEGIN("unit");

namespace {

// A unit sphere filling the centre of the view, inside a uniform environment.
std::string furnace_scene(const std::string& material, const std::string& integrator, int max_depth) {
  return R"(
[render]
width = 32
height = 32
spp = 64
integrator = ")" + integrator + R"("
max_depth = )" + std::to_string(max_depth) + R"(
[camera]
position = [0, 0, 4]
look_at = [0, 0, 0]
fov = 20
[environment]
color = [1, 1, 1]
[[material]]
name = "m"
)" + material + R"(
[[object]]
type = "sphere"
center = [0, 0, 0]
radius = 1
material = "m"
)";
}

double centre_mean(const rt::Scene& scene, int c = 0) {
  auto img = test_render::render_full(scene);
  return test_render::mean_channel(img, 32, 10, 10, 22, 22, c);
}

}  // namespace

TEST_CASE("physics: white furnace, a diffuse sphere of albedo a under uniform radiance L shows a*L") {
  // A convex object sees only the environment, so one bounce gives exactly a * L.
  for (double albedo : {0.2, 0.5, 0.9}) {
    CAPTURE(albedo);
    auto scene = test_render::scene_from(
        furnace_scene("type = \"diffuse\"\nalbedo = " + std::to_string(albedo), "path", 8));
    CHECK(centre_mean(*scene) == doctest::Approx(albedo).epsilon(0.02));
  }
}

TEST_CASE("physics: white furnace, a clear glass sphere neither creates nor loses energy") {
  auto scene = test_render::scene_from(furnace_scene("type = \"glass\"\nior = 1.5", "path", 64));
  CHECK(centre_mean(*scene) == doctest::Approx(1.0).epsilon(0.03));
}

TEST_CASE("physics: white furnace, rough metal of reflectance 1 matches the GGX directional albedo") {
  // Single-scattering GGX loses energy as roughness grows and never gains any. Reference
  // ranges: the directional albedo of GGX with F = 1 near normal incidence, integrated
  // numerically (alpha = roughness^2): ~0.99 (alpha 0.01), ~0.91 (0.25), ~0.31-0.36 (1).
  struct Case { double roughness, lo, hi; };
  for (Case c : {Case{0.1, 0.95, 1.02}, Case{0.5, 0.86, 0.95}, Case{1.0, 0.28, 0.37}}) {
    CAPTURE(c.roughness);
    auto scene = test_render::scene_from(furnace_scene(
        "type = \"metal\"\nalbedo = 1\nroughness = " + std::to_string(c.roughness), "path", 8));
    double v = centre_mean(*scene);
    CHECK(v >= c.lo);
    CHECK(v <= c.hi);
  }
}

TEST_CASE("physics: a mirror shows the colour behind the camera times its reflectance") {
  // The camera looks at a mirror facing it; behind the camera is a red emitter filling the view.
  const std::string scene_text = R"(
[render]
width = 16
height = 16
spp = 4
integrator = "INTEGRATOR"
[camera]
position = [0, 0, 2]
look_at = [0, 0, 0]
fov = 30
[[material]]
name = "m"
type = "mirror"
albedo = [0.5, 0.8, 1.0]
[[material]]
name = "red"
type = "emissive"
emission = [2, 0.5, 0.25]
[[object]]
type = "quad"
corner = [-5, -5, 0]
edge_u = [10, 0, 0]
edge_v = [0, 10, 0]
material = "m"
[[object]]
type = "quad"
corner = [-50, -50, 10]
edge_u = [0, 100, 0]
edge_v = [100, 0, 0]
material = "red"
)";
  for (std::string integrator : {"whitted", "path"}) {
    CAPTURE(integrator);
    std::string text = scene_text;
    text.replace(text.find("INTEGRATOR"), 10, integrator);
    auto scene = test_render::scene_from(text);
    auto img = test_render::render_full(*scene);
    CHECK(test_render::mean_channel(img, 16, 0, 0, 16, 16, 0) == doctest::Approx(1.0).epsilon(1e-4));
    CHECK(test_render::mean_channel(img, 16, 0, 0, 16, 16, 1) == doctest::Approx(0.4).epsilon(1e-4));
    CHECK(test_render::mean_channel(img, 16, 0, 0, 16, 16, 2) == doctest::Approx(0.25).epsilon(1e-4));
  }
}

TEST_CASE("physics: energy converges with depth in an open box lit by a uniform sky") {
  // Each extra bounce adds light, but less than the one before, and no pixel exceeds the
  // sky's radiance (albedo < 1 everywhere).
  auto render_mean = [](int depth, double* max_pixel) {
    auto scene = test_render::scene_from(R"(
[render]
width = 24
height = 24
spp = 32
max_depth = )" + std::to_string(depth) + R"(
[camera]
position = [0, 0.5, 3]
look_at = [0, 0.5, 0]
fov = 40
[environment]
color = 1
[[material]]
name = "wall"
type = "diffuse"
albedo = 0.8
[[object]]
type = "quad"
corner = [-1, 0, -1]
edge_u = [0, 0, 2]
edge_v = [2, 0, 0]
material = "wall"
[[object]]
type = "quad"
corner = [-1, 0, -1]
edge_u = [2, 0, 0]
edge_v = [0, 2, 0]
material = "wall"
[[object]]
type = "quad"
corner = [-1, 0, -1]
edge_u = [0, 2, 0]
edge_v = [0, 0, 2]
material = "wall"
[[object]]
type = "quad"
corner = [1, 0, -1]
edge_u = [0, 0, 2]
edge_v = [0, 2, 0]
material = "wall"
)");
    auto img = test_render::render_full(*scene);
    *max_pixel = 0;
    for (size_t i = 0; i < img.size(); i += 4) *max_pixel = std::max<double>(*max_pixel, img[i]);
    return test_render::mean_channel(img, 24, 4, 4, 20, 20, 0);
  };
  double max1, max2, max4, max8;
  double m1 = render_mean(1, &max1), m2 = render_mean(2, &max2), m4 = render_mean(4, &max4), m8 = render_mean(8, &max8);
  CHECK(m1 < m2);
  CHECK(m2 < m4);
  CHECK(m4 < m8 + 0.01);
  CHECK(m8 - m4 < m2 - m1);
  for (double mx : {max1, max2, max4, max8}) CHECK(mx <= 1.05);
}

TEST_CASE("physics: a constant sky is left to BSDF sampling, so a convex diffuse object under it is exact at 1 spp") {
  // A cosine-sampled bounce off a diffuse surface carries exactly albedo * L from a constant sky,
  // so every sample that hits the sphere is a*L and no shadow ray is needed. Sampling the sky as
  // a light too (uniform over the sphere, MIS-weighted) made each sample noisy and cost rays.
  std::string text = furnace_scene("type = \"diffuse\"\nalbedo = 0.5", "path", 1);
  text.replace(text.find("spp = 64"), 8, "spp = 1");
  auto scene = test_render::scene_from(text);
  const auto& s = scene->desc.settings;
  std::vector<float> rgba(static_cast<size_t>(s.width) * s.height * 4);
  rt::RayCounts counts;
  rt::render_rect(*scene, 1, {0, 0, s.width, s.height}, rgba.data(), &counts);
  CHECK(counts.shadow == 0);
  int off = 0;
  for (int y = 10; y < 22; ++y)
    for (int x = 10; x < 22; ++x)
      for (int c = 0; c < 3; ++c) off += std::fabs(rgba[4 * (y * s.width + x) + c] - 0.5f) > 1e-4f;
  CHECK(off == 0);

  // An environment image (even a constant one) is still importance-sampled as a light.
  auto dir = test_paths::temp_dir("env_image_rays");
  std::vector<float> px(64 * 32 * 4, 1.0f);
  std::string env = (dir / "sky.exr").string();
  rt::write_image(env, 64, 32, px.data());
  text.replace(text.find("color = [1, 1, 1]"), 17, "image = \"" + env + "\"");
  auto image_lit = rt::load_scene(rt::parse_scene_string(text, (dir / "scene.toml").string()));
  rt::RayCounts image_counts;
  rt::render_rect(*image_lit, 1, {0, 0, s.width, s.height}, rgba.data(), &image_counts);
  CHECK(image_counts.shadow > 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("physics: white furnace lit by an environment image (importance-sampled) shows a*L too") {
  // A constant lat-long image must behave exactly like the constant colour: this checks the
  // image distribution's pdf normalisation, which MIS weights depend on.
  auto dir = test_paths::temp_dir("env_image");
  const int w = 64, h = 32;
  std::vector<float> px(static_cast<size_t>(w) * h * 4, 1.0f);
  std::string env = (dir / "sky.exr").string();
  rt::write_image(env, w, h, px.data());
  std::string text = furnace_scene("type = \"diffuse\"\nalbedo = 0.5", "path", 8);
  text.replace(text.find("color = [1, 1, 1]"), 17, "image = \"" + env + "\"");
  auto scene = rt::load_scene(rt::parse_scene_string(text, (dir / "scene.toml").string()));
  CHECK(centre_mean(*scene) == doctest::Approx(0.5).epsilon(0.02));
  std::filesystem::remove_all(dir);
}

TEST_CASE("physics: a bright sun patch in an environment image converges without fireflies") {
  // 1% of the sky is 500x brighter than the rest. With importance sampling the diffuse
  // sphere's pixels stay close to their neighbours; without it a few samples would carry
  // most of the energy and pixels would differ wildly.
  auto dir = test_paths::temp_dir("env_sun");
  const int w = 100, h = 50;
  std::vector<float> px(static_cast<size_t>(w) * h * 4, 0.1f);
  for (int y = 10; y < 15; ++y)
    for (int x = 40; x < 45; ++x)
      for (int c = 0; c < 3; ++c) px[4 * (static_cast<size_t>(y) * w + x) + c] = 50.0f;
  std::string env = (dir / "sun.exr").string();
  rt::write_image(env, w, h, px.data());
  std::string text = furnace_scene("type = \"diffuse\"\nalbedo = 0.5", "path", 4);
  text.replace(text.find("color = [1, 1, 1]"), 17, "image = \"" + env + "\"");
  auto scene = rt::load_scene(rt::parse_scene_string(text, (dir / "scene.toml").string()));
  auto img = test_render::render_full(*scene);
  // Relative spread between horizontally adjacent pixels in the sphere's centre.
  double worst = 0;
  for (int y = 12; y < 20; ++y)
    for (int x = 12; x < 19; ++x) {
      double a = img[4 * (y * 32 + x)], b = img[4 * (y * 32 + x + 1)];
      worst = std::max(worst, std::abs(a - b) / std::max(1e-6, 0.5 * (a + b)));
    }
  CHECK(worst < 0.5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("physics: a plane under a sun and a uniform sky shows a (E cos / pi + L), with little noise") {
  // Direct light only. The sun's part is exact at every sample (delta lights are evaluated at
  // every vertex); the sky's comes from the path's cosine-sampled BSDF ray (a constant sky is not
  // sampled as a light). When the sun and the sky competed for one light sample, 1-spp pixels
  // scattered by 55% of the mean; with the sky MIS-sampled apart from the sun, by 10%.
  const std::string text = R"(
[render]
width = 16
height = 16
spp = 1
integrator = "path"
max_depth = 1
[camera]
position = [0, 5, 0.001]
look_at = [0, 0, 0]
fov = 20
[environment]
color = [0.5, 0.5, 0.5]
[[light]]
type = "directional"
direction = [0, -1, -1]
intensity = 3
[[material]]
name = "m"
type = "diffuse"
albedo = 0.6
[[object]]
type = "plane"
material = "m"
size = 1000
)";
  auto pixel_stats = [](const std::string& toml) {  // mean and standard deviation of red
    auto img = test_render::render_full(*test_render::scene_from(toml));
    double sum = 0, sum_sq = 0;
    for (int i = 0; i < 16 * 16; ++i) {
      sum += img[4 * i];
      sum_sq += static_cast<double>(img[4 * i]) * img[4 * i];
    }
    const double mean = sum / 256;
    return std::pair<double, double>{mean, std::sqrt(std::max(0.0, sum_sq / 256 - mean * mean))};
  };
  const double cos_sun = 1 / std::sqrt(2.0);
  const double expected = 0.6 * (3 * cos_sun / 3.14159265358979 + 0.5);
  std::string converged = text;
  converged.replace(converged.find("spp = 1\n"), 8, "spp = 64\n");
  CHECK(pixel_stats(converged).first == doctest::Approx(expected).epsilon(0.01));
  auto [mean, spread] = pixel_stats(text);
  CHECK(spread / mean < 0.2);
}

TEST_SUITE_END();
