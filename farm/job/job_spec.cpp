#include "cli/render_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "image/image_io.h"

namespace farm {

void add_render_options(CLI::App& cmd, RenderOptions& o, bool with_output) {
  cmd.add_option("scene", o.scene_path, "Scene file (TOML, or glTF 2.0 .gltf/.glb)")->required();
  if (with_output)
    cmd.add_option("-o,--output", o.output_path, "Output image: .png .tga .ppm (8-bit sRGB) or .exr (float)")->required();
  cmd.add_option("--assets", o.asset_dirs, "Extra folder to look for meshes/textures in (repeatable; also $FARM_ASSETS)");
  cmd.add_option("--width", o.width, "Override the scene's image width (pixels)")->check(CLI::Range(1, 16384));
  cmd.add_option("--height", o.height, "Override the scene's image height (pixels)")->check(CLI::Range(1, 16384));
  cmd.add_option("--spp", o.spp, "Override samples per pixel")->check(CLI::Range(1, 65536));
  cmd.add_option("--frame", o.frame, "Render only this frame (1-based)")->check(CLI::PositiveNumber);
  cmd.add_option("--max-depth", o.max_depth, "Override the maximum bounce depth")->check(CLI::Range(0, 64));
  cmd.add_option("--integrator", o.integrator, "Override the integrator")->check(CLI::IsMember({"whitted", "path"}));
  cmd.add_option("--seed", o.seed, "Override the random seed");
  cmd.add_option("--camera", o.camera, "Use this camera of the scene file (glTF: a camera's name or index from 0)");
  cmd.add_option("--texture-cache", o.texture_cache_mb,
                 "Memory for decoded textures in MiB, shared by all threads: images are held whole while they fit, the rest in a tile cache (default 1024)")
      ->check(CLI::Range(16, 1 << 20));
}

// Keeps the camera's aspect ratio when only one side is given.
void fit_aspect(const RenderOptions& o, const rt::SceneDesc& desc, rt::RenderSettings& s) {
  if (!(desc.camera_aspect > 0)) return;
  auto clamp_side = [](double v) { return static_cast<int>(std::clamp(std::lround(v), 1L, 16384L)); };
  if (o.width && !o.height) s.height = clamp_side(*o.width / desc.camera_aspect);
  if (o.height && !o.width) s.width = clamp_side(*o.height * desc.camera_aspect);
}

rt::SceneDesc load_scene_desc(const RenderOptions& o) {
  rt::AssetSearch search;
  search.dirs = o.asset_dirs;
  rt::SceneDesc desc = rt::parse_scene_file(o.scene_path, search);
  if (o.camera) rt::use_camera(desc, *o.camera);
  for (const std::string& notice : desc.notices) spdlog::warn("{}: {}", o.scene_path, notice);
  rt::RenderSettings& s = desc.settings;
  if (o.width) s.width = *o.width;
  if (o.height) s.height = *o.height;
  fit_aspect(o, desc, s);
  if (o.spp) s.spp = *o.spp;
  if (o.max_depth) s.max_depth = *o.max_depth;
  if (o.seed) s.seed = *o.seed;
  if (o.integrator) s.integrator = *o.integrator == "whitted" ? rt::IntegratorKind::whitted : rt::IntegratorKind::path;
  if (static_cast<long long>(s.width) * s.height > (1LL << 28)) {
    throw std::invalid_argument("image of " + std::to_string(s.width) + "x" + std::to_string(s.height) +
                                " pixels is too large (at most 2^28 pixels)");
  }
  if (o.frame && *o.frame > s.frames) {
    throw std::invalid_argument("--frame " + std::to_string(*o.frame) + " but the scene has " +
                                std::to_string(s.frames) + " frame(s)");
  }
  return desc;
}

std::vector<int> frames_to_render(const RenderOptions& o, const rt::SceneDesc& desc) {
  if (o.frame) return {*o.frame};
  std::vector<int> frames;
  for (int f = 1; f <= desc.settings.frames; ++f) frames.push_back(f);
  return frames;
}

std::string output_path_for_frame(const std::string& path, int frame, bool numbered) {
  if (!numbered) return path;
  std::filesystem::path p(path);
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%04d", frame);
  return (p.parent_path() / (p.stem().string() + suffix + p.extension().string())).string();
}

void check_output_path(const std::string& path) {
  rt::image_format_for(path);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw std::invalid_argument("output folder '" + dir.string() + "' does not exist");
  }
}

}  // namespace farm
