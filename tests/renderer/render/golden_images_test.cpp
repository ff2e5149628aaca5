// Golden images: every bundled scene (scenes/*.toml) rendered small (40x30, 2 samples per pixel,
// frame 1) must give exactly the float pixels of tests/golden/<scene>.exr. The farm's tests check
// that the farm equals `farm single`; these check that `farm single` itself has not moved. A
// change that is meant to change images updates them (and the diff is the reviewer's to look at):
//   FARM_UPDATE_GOLDEN=1 ./build/tests/renderer_tests -tc="golden*"
// A failure writes the new render beside the build (golden-diff/<scene>.exr and .png) to look at.
#include <doctest/doctest.h>

#include <OpenImageIO/imageio.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "image/image_io.h"
#include "render/render.h"
#include "renderer/render_helpers.h"
#include "scene/scene_desc.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

namespace fs = std::filesystem;

namespace {

constexpr int k_width = 40, k_height = 30, k_spp = 2;

std::vector<float> read_exr(const std::string& path, int& width, int& height) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) return {};
  width = in->spec().width;
  height = in->spec().height;
  std::vector<float> rgba(static_cast<size_t>(width) * height * 4);
  if (in->spec().nchannels != 4 || !in->read_image(0, 0, 0, 4, OIIO::TypeDesc::FLOAT, rgba.data())) return {};
  return rgba;
}

}  // namespace

TEST_CASE("golden images: every bundled scene renders exactly its golden image (40x30, 2 spp)") {
  const bool update = std::getenv("FARM_UPDATE_GOLDEN") != nullptr;
#if defined(__x86_64__)
  // The renderer caps Embree at its AVX2 kernels (load_scene); the goldens are those kernels' bits.
  // A CPU without them runs Embree's SSE/AVX kernels, whose last bits differ: nothing to compare.
  __builtin_cpu_init();
  if (!update && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                   __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))) {
    MESSAGE("skipped: this CPU has no AVX2/FMA/BMI2, so Embree runs kernels the goldens were not made with");
    return;
  }
#endif
  std::vector<fs::path> scenes;
  for (const auto& entry : fs::directory_iterator(test_paths::project("scenes")))
    if (entry.is_regular_file() && entry.path().extension() == ".toml") scenes.push_back(entry.path());
  std::sort(scenes.begin(), scenes.end());
  REQUIRE(scenes.size() >= 8);
  std::vector<std::string> skipped;
  for (const fs::path& path : scenes) {
    const std::string name = path.stem().string();
    CAPTURE(name);
    rt::SceneDesc desc;
    try {
      desc = rt::parse_scene_file(path.string(), rt::AssetSearch{{test_paths::shared_scenes()}});
    } catch (const rt::SceneError& e) {
      if (!test_paths::have_shared_scenes()) {
        skipped.push_back(name);
        continue;
      }
      FAIL(e.what());
    }
    desc.settings.width = k_width;
    desc.settings.height = k_height;
    desc.settings.spp = k_spp;
    auto scene = rt::load_scene(desc);
    const std::vector<float> rgba = test_render::render_full(*scene, 1);
    const std::string golden = test_paths::project("tests/golden/" + name + ".exr");
    if (update) {
      rt::write_image(golden, k_width, k_height, rgba.data());
      MESSAGE("updated " << golden);
      continue;
    }
    int w = 0, h = 0;
    const std::vector<float> expected = read_exr(golden, w, h);
    REQUIRE_MESSAGE(!expected.empty(), "no golden image " << golden << " (FARM_UPDATE_GOLDEN=1 writes it)");
    REQUIRE(w == k_width);
    REQUIRE(h == k_height);
    size_t differ = 0;
    float worst = 0;
    for (size_t i = 0; i < rgba.size(); i += 4) {
      bool same = std::memcmp(&rgba[i], &expected[i], 4 * sizeof(float)) == 0;
      differ += same ? 0 : 1;
      for (int c = 0; c < 4; ++c) worst = std::max(worst, std::fabs(rgba[i + c] - expected[i + c]));
    }
    if (differ > 0) {
      const fs::path out = fs::current_path() / "golden-diff";
      fs::create_directories(out);
      rt::write_image((out / (name + ".exr")).string(), k_width, k_height, rgba.data());
      rt::write_image((out / (name + ".png")).string(), k_width, k_height, rgba.data());
      FAIL_CHECK(differ << " of " << k_width * k_height << " pixels differ from " << golden << " (largest difference "
                        << worst << "); the new render is in " << out.string());
    }
  }
  if (!skipped.empty())
    MESSAGE("skipped: " << skipped.size() << " scene(s) need ../shared/scenes, which is absent, e.g. " << skipped.front());
}

TEST_SUITE_END();
