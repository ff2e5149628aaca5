#include "cli/render_options.h"
#include "cli/option_checks.h"

#include "backend/sandbox.h"
#include "base/limits.h"
#include "scene/scene_desc.h"

namespace farm {

void add_render_options(CLI::App& cmd, RenderOptions& o, bool with_output) {
  cmd.add_option("scene", o.scene_path, "Scene file (TOML, or glTF 2.0 .gltf/.glb)")->required();
  if (with_output)
    cmd.add_option("-o,--output", o.output_path, "Output image: .png .tga .ppm (8-bit sRGB) or .exr (float)")->required();
  cmd.add_option("--assets", o.asset_dirs, "Extra folder to look for meshes/textures in (repeatable; also $FARM_ASSETS)");
  cmd.add_option("--width", o.width, "Override the scene's image width (pixels)")->transform(in_range(1, rt::k_max_image_side));
  cmd.add_option("--height", o.height, "Override the scene's image height (pixels)")->transform(in_range(1, rt::k_max_image_side));
  cmd.add_option("--spp", o.spp, "Override samples per pixel")->transform(in_range(1, rt::k_max_spp));
  cmd.add_option("--frame", o.frame, "Render only this frame (1-based)")->transform(at_least(1));
  cmd.add_option("--max-depth", o.max_depth, "Override the maximum bounce depth")->transform(in_range(0, rt::k_max_bounces));
  cmd.add_option("--integrator", o.integrator, "Override the integrator")->check(CLI::IsMember({"whitted", "path"}));
  cmd.add_option("--noise-threshold", o.noise_threshold,
                 "Adaptive sampling: a pixel stops once its own error estimate is under this (0..1; 0 = off; --spp is "
                 "then the most it takes; docs/scene-format.md)")
      ->transform(in_range(0.0f, 1.0f));
  cmd.add_option("--min-samples", o.min_samples,
                 "With --noise-threshold: samples before a pixel's first check (0 = automatic)")
      ->transform(in_range(0, rt::k_max_spp));
  cmd.add_option("--passes", o.passes,
                 "Passes to write with the image into one multi-layer EXR, comma-separated: albedo, normal, depth, "
                 "position, object_id, material_id, sample_count, variance, or all (docs/passes.md)")
      ->check([](const std::string& text) {
        std::string error;
        return rt::parse_pass_list(text, error) ? std::string() : error;
      });
  cmd.add_option("--seed", o.seed, "Override the random seed")
      ->transform(in_range<uint64_t>(0, std::numeric_limits<uint64_t>::max()));
  cmd.add_option("--renderer-options", o.renderer_options,
                 "For a POV-Ray scene (.pov): its switches, e.g. '+A0.3 +R3' (anti-aliasing, quality, Declare=...)");
  cmd.add_option("--renderer-memory", o.renderer_memory_mib,
                 "POV-Ray and Blender: each renderer process's memory limit in MiB (default " +
                     std::to_string(k_default_renderer_memory_mib) + ")")
      ->transform(in_range<uint64_t>(64, k_max_renderer_memory_mib));
  cmd.add_option("--renderer-timeout", o.renderer_seconds,
                 "POV-Ray and Blender: seconds one renderer run may take (a block, a parse, a scene load; default " +
                     std::to_string(k_default_renderer_seconds) + ")")
      ->transform(in_range<uint32_t>(1, k_max_renderer_seconds));
  cmd.add_flag("--no-sandbox", o.no_sandbox,
               "Run POV-Ray and Blender unconfined where bubblewrap cannot confine them (docs/sandbox.md): a scene "
               "is then a program with this user's rights");
  cmd.add_option("--camera", o.camera, "Use this camera of the scene file (glTF: a camera's name or index from 0)");
  cmd.add_option("--texture-cache", o.texture_cache_mb,
                 "Memory for decoded textures in MiB, shared by all threads: images are held whole while they fit, the rest in a tile cache (default 1024)")
      ->transform(in_range(16, 1 << 20));
}

}  // namespace farm
