// Blender Cycles behind the seam: each render thread of a worker keeps one persistent
// `blender -b SCENE.blend` (BlenderProcess) that renders border regions cropped to the block.
// Cycles samples every pixel from its own coordinates, so a border region's pixels equal the
// full frame's exactly once the settings that read across pixels are off (adaptive sampling,
// denoising, compositing, dithering: blender_bridge.py, docs/blender.md).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backend/block_renderer.h"
#include "backend/sandbox.h"

namespace farm {

class BlenderProcess;

// What the farm needs to know of a .blend before rendering it, as Blender reports it.
struct BlenderSceneInfo {
  std::string version;  // bpy.app.version_string, "3.4.1"
  std::string engine;   // "CYCLES", "BLENDER_EEVEE", ...
  int width = 0, height = 0;
  int frame_start = 1, frame_end = 1, frame_step = 1;
  int samples = 0;
  std::string camera;  // the scene's camera ("" for none)
  std::vector<std::string> cameras;
  bool multiview = false;
  struct File {
    std::string path;  // absolute, as Blender resolves it
    std::string raw;   // as the .blend spells it ("//textures/wood.png")
    std::string kind, name;  // the datablock that names it ("image", "wood")
  };
  std::vector<File> files;
  std::vector<std::string> problems;  // what the farm cannot render, in words
  // Why each frame must be rendered whole, by one Blender on one thread (Freestyle: its lines
  // are drawn within the region rendered), in words; empty when blocks are exact.
  std::vector<std::string> whole_frame;
  // Its output format is OpenEXR MultiLayer: rendered to an .exr, the farm writes every view
  // layer's every pass as Blender would (docs/blender.md).
  bool multilayer = false;
  std::string view_layer;  // the active one, whose colour the farm shows (live view, tile map)
};

// Starts Blender on the scene (confined, within `limits`) and asks. Throws rt::SceneError for a
// file Blender cannot read.
BlenderSceneInfo blender_scene_info(const std::string& scene_path, const RendererLimits& limits = {});

// "Blender 3.4.1", from `blender --version`; throws std::runtime_error naming what to install.
std::string blender_version();

// How the job's pixels leave Blender: scene-linear floats (an EXR output), Blender's own 8-bit
// display values through the .blend's view transform (8-bit outputs), which the worker turns into
// the floats the farm's 8-bit encoder gives back byte for byte, or every channel of a multi-layer
// EXR (a .blend set to OpenEXR MultiLayer rendered to an .exr).
enum class BlenderPixels { linear, display8, layers };

// A Blender job as it travels in JobSettings::renderer_options: "pixels=linear|display8|layers",
// "frame_start=N", "frame_step=N" (farm frame f is Blender frame start + (f - 1) * step).
struct BlenderJobOptions {
  BlenderPixels pixels = BlenderPixels::linear;
  int frame_start = 1, frame_step = 1;
};
std::vector<std::string> blender_option_words(const BlenderJobOptions& o);
// Throws std::invalid_argument naming a word that is not one of those.
BlenderJobOptions parse_blender_options(const std::vector<std::string>& words);

struct BlenderSettings {
  std::string scene_path;
  int width = 0, height = 0, samples = 0;
  std::optional<std::string> camera;
  BlenderJobOptions job;
  int threads = 1;  // Cycles threads of each Blender process
  RendererLimits limits;  // each Blender's memory; its load's and each block's time
  // With pixels=layers: the channels to deliver, the colour's R, G, B first (JobSettings::channels).
  std::vector<std::string> channels;
};

// Renders `rect` (x, y, width, height from the top left; or the whole image) of farm frame
// `frame` with `process` into linear float RGBA; with pixels=layers also the channels past the
// colour's three into `carried` (s.channels.size() - 3 floats per pixel), found by name.
void blender_render(BlenderProcess& process, const BlenderSettings& s, int frame, int x, int y, int width, int height,
                    float* rgba, float* carried = nullptr);

// What Blender writes for a multi-layer job (s.job.pixels == layers): its channels as the farm
// carries them (the Combined R, G, B of `view_layer`, or of the first layer that has one, first;
// then every other in the file's order) and the text the file carries with them (Cryptomatte's
// "cryptomatte/..." names and manifests, which do not depend on the region rendered). Renders
// one pixel of the first frame to find out. Throws rt::SceneError for a channel set the farm
// cannot carry (no Combined pass, a name with '|').
struct BlenderOutput {
  std::vector<std::string> channels;
  std::vector<std::pair<std::string, std::string>> attributes;
};
BlenderOutput blender_output(const BlenderSettings& s, const std::string& view_layer);

// Starts a Blender process for these settings (the bridge's arguments made from them).
std::unique_ptr<BlenderProcess> start_blender(const BlenderSettings& s);

class BlenderRenderer : public BlockRenderer {
 public:
  // Starts the first Blender now, so that a bad scene fails the load, not every block.
  explicit BlenderRenderer(BlenderSettings settings);
  ~BlenderRenderer() override;
  // Takes an idle Blender (or starts one), renders, and gives it back; a Blender that died
  // mid-block is dropped (the block fails and is leased again) and a new one starts next time.
  uint64_t render(const Block& block, float* rgba, float* carried) override;
  int carried_floats() const override;
  void interrupt(const Block& block) override;
  void interrupt_all() override;

 private:
  BlenderSettings m_settings;
  std::mutex m_mutex;
  std::vector<std::unique_ptr<BlenderProcess>> m_idle;
  std::vector<std::pair<Block, BlenderProcess*>> m_busy;  // owned by the thread rendering the block
};

}  // namespace farm
