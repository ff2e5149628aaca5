// What one render job is, whichever command runs it (`single`, `render`, `master`, `plan`): the
// scene, asset folders, output path and overrides of the scene's own settings; loading the
// scene for it and naming its outputs. No CLI here: cli/ binds options onto RenderOptions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scene/scene_desc.h"

namespace farm {

struct RenderOptions {
  std::string scene_path;
  std::string output_path;
  std::vector<std::string> asset_dirs;
  std::optional<int> width, height, spp, frame, max_depth;
  std::optional<std::string> integrator;
  std::optional<std::string> camera;  // a scene camera's name or index (glTF)
  int texture_cache_mb = 1024;        // decoded texels held in memory at once (this process)
  std::optional<uint64_t> seed;
  // Adaptive sampling (our renderer's; render/adaptive_sampling.h): the scene's [render] keys.
  std::optional<float> noise_threshold;
  std::optional<int> min_samples;
  std::optional<std::string> passes;  // a pass list (scene/passes.h); the scene's [render] passes
  std::string renderer_options;  // for a scene of another renderer: its options (POV-Ray switches)
  // Each POV-Ray or Blender process's limits (backend/sandbox.h); 0 = the defaults.
  uint64_t renderer_memory_mib = 0;
  uint32_t renderer_seconds = 0;
  bool no_sandbox = false;  // the operator's explicit choice to run renderers unconfined
};

// Parses the scene (cheap: no meshes) and applies the overrides (a .pov scene: its size from the
// options or POV-Ray's default, one frame, and the files it names as asset_files); with only one of --width
// and --height, the other follows the camera's aspect ratio when the scene gives one. Throws rt::SceneError for
// scene problems and std::invalid_argument for overrides out of range.
rt::SceneDesc load_scene_desc(const RenderOptions& options);
// The same, also giving why each frame of a scene of another renderer must be rendered whole, by
// one process on one thread (located features whose pixels depend on the region or order
// rendered: backend/whole_frame.h); empty when blocks are exact. A frame too large for one block
// is then refused (rt::SceneError).
rt::SceneDesc load_scene_desc(const RenderOptions& options, std::vector<std::string>& whole_frame_reasons);

// The frames to render: --frame if given, else all of them.
std::vector<int> frames_to_render(const RenderOptions& options, const rt::SceneDesc& desc);

// Output file for `frame`: the path itself for a single frame, else name_0001.ext.
// Fails before any work if the output cannot possibly be written (format, folder); throws
// std::invalid_argument naming what is wrong.
void check_output_path(const std::string& path);

std::string output_path_for_frame(const std::string& path, int frame, bool numbered);

// Where the journal of a job writing `output_path` lives by default.
std::string default_journal_path(const std::string& output_path);

}  // namespace farm
