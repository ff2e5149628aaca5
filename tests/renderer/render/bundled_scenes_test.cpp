// The scenes shipped in scenes/*.toml: each one parses, loads and renders (tiny) to a
// plausible image, and chess2 keeps the uneven per-pixel cost it is there for.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "test_paths.h"
#include "render/render.h"
#include "renderer/render_helpers.h"
#include "scene/scene_desc.h"

TEST_SUITE_BEGIN("unit");

namespace {

std::vector<std::string> bundled_scene_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(test_paths::project("scenes")))
    if (entry.is_regular_file() && entry.path().extension() == ".toml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

rt::AssetSearch shared_search() { return rt::AssetSearch{{test_paths::shared_scenes()}}; }

// Parses a bundled scene; returns false (after saying why) when it needs ../shared/scenes
// and that folder is absent.
bool parse_bundled(const std::string& path, rt::SceneDesc& desc) {
  try {
    desc = rt::parse_scene_file(path, shared_search());
    return true;
  } catch (const rt::SceneError& e) {
    if (!test_paths::have_shared_scenes() && std::string(e.what()).find("not found") != std::string::npos) {
      MESSAGE("skipping " << std::filesystem::path(path).filename().string()
                          << ": it needs ../shared/scenes, which is absent (" << e.what() << ")");
      return false;
    }
    throw;
  }
}

}  // namespace

TEST_CASE("bundled scenes: the expected set is there") {
  std::vector<std::string> names;
  for (const std::string& f : bundled_scene_files()) names.push_back(std::filesystem::path(f).filename().string());
  for (const char* expected : {"chess2.toml", "skyvase.toml", "desk.toml", "bucket.toml", "wg6.toml", "cornell.toml",
                               "orbit.toml", "bunny.toml"}) {
    INFO("scene: " << expected);
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
}

TEST_CASE("bundled scenes: each parses, loads and renders a plausible tiny image") {
  const std::vector<std::string> files = bundled_scene_files();
  REQUIRE(!files.empty());
  for (const std::string& path : files) {
    const std::string name = std::filesystem::path(path).filename().string();
    INFO("scene: " << name);
    rt::SceneDesc desc;
    bool parsed = false;
    REQUIRE_NOTHROW(parsed = parse_bundled(path, desc));
    if (!parsed) continue;  // needs ../shared/scenes, which is absent

    // Every bundled scene defaults to the paper's small size, 320x240.
    CHECK(desc.settings.width == 320);
    CHECK(desc.settings.height == 240);

    desc.settings.width = 32;
    desc.settings.height = 24;
    desc.settings.spp = 1;
    std::unique_ptr<rt::Scene> scene;
    REQUIRE_NOTHROW(scene = rt::load_scene(desc));
    std::vector<float> rgba;
    REQUIRE_NOTHROW(rgba = test_render::render_full(*scene, 1));

    bool finite = true;
    float max_value = 0;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < rgba.size(); i += 4) {
      for (int c = 0; c < 3; ++c) {
        float v = rgba[i + c];
        if (!std::isfinite(v)) finite = false;
        max_value = std::max(max_value, v);
        lo[c] = std::min(lo[c], v);
        hi[c] = std::max(hi[c], v);
      }
    }
    CHECK_MESSAGE(finite, "NaN or infinite pixel");
    CHECK_MESSAGE(max_value > 0.05f, "image is (nearly) all black");
    const float spread = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
    CHECK_MESSAGE(spread > 0.05f, "image is (nearly) one colour");
  }
}

TEST_CASE("bundled scenes: every frame of the animated scene renders") {
  rt::SceneDesc desc = rt::parse_scene_file(test_paths::project("scenes/orbit.toml"), shared_search());
  REQUIRE(desc.settings.frames > 1);
  REQUIRE(desc.camera.keyframes.size() >= 2);
  desc.settings.width = 16;
  desc.settings.height = 12;
  desc.settings.spp = 1;
  auto scene = rt::load_scene(desc);
  std::vector<float> first = test_render::render_full(*scene, 1);
  std::vector<float> last = test_render::render_full(*scene, desc.settings.frames);
  CHECK(first != last);  // the camera moved
}

TEST_CASE("bundled scenes: chess2's per-pixel cost is strongly uneven") {
  // The sky at the top of the frame costs a camera ray per sample; the glass and gold
  // pieces in the middle cost many reflected, refracted and shadow rays. A farm's load
  // balancing is tested against exactly this, so keep it so.
  rt::SceneDesc desc = rt::parse_scene_file(test_paths::project("scenes/chess2.toml"), shared_search());
  CHECK(desc.settings.integrator == rt::IntegratorKind::whitted);
  CHECK(desc.camera.key.aperture > 0);  // focal blur
  desc.settings.width = 64;
  desc.settings.height = 48;
  desc.settings.spp = 1;
  auto scene = rt::load_scene(desc);
  std::vector<float> rgba(static_cast<size_t>(64) * 16 * 4);
  rt::RayCounts sky, pieces;
  rt::render_rect(*scene, 1, {0, 0, 64, 8}, rgba.data(), &sky);       // top sixth: sky
  rt::render_rect(*scene, 1, {0, 20, 64, 16}, rgba.data(), &pieces);  // middle third: the pieces
  const double sky_per_pixel = static_cast<double>(sky.total()) / (64 * 8);
  const double pieces_per_pixel = static_cast<double>(pieces.total()) / (64 * 16);
  INFO("rays per pixel: sky " << sky_per_pixel << ", pieces " << pieces_per_pixel);
  CHECK(sky_per_pixel < 1.5);
  CHECK(pieces_per_pixel > 5 * sky_per_pixel);
  CHECK(pieces.refracted > 0);
  CHECK(pieces.reflected > 0);
}

TEST_SUITE_END();
