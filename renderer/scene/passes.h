// Passes (AOVs): what a pixel holds besides its colour, for compositing and denoising. Each is
// computed from the pixel's own samples only, like the colour, so any tiling gives the same
// floats. Names follow what Blender's OPEN_EXR_MULTILAYER writes ("ViewLayer.Depth.Z"), so
// Blender's and Nuke's readers see one layer with these passes (docs/passes.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rt {

enum class Pass : uint8_t {
  albedo,        // first hit's reflectance, mean over the samples (1 for mirror/glass, 0 for the sky)
  normal,        // first hit's shading normal (world space), mean over the samples (0 for the sky)
  depth,         // first sample: distance along the camera's view axis (1e10 for the sky, as Blender)
  position,      // first sample: world position of the hit (0 for the sky)
  object_id,     // first sample: the hit object's index + 1 in the scene (0 for the sky)
  material_id,   // first sample: the hit material's index + 1 (0 for the sky)
  sample_count,  // samples the pixel took (spp unless adaptive sampling stopped it earlier)
  variance,      // estimated variance of the pixel's mean, averaged over R, G, B
};
constexpr int k_pass_kinds = 8;

// A set of passes, bit (1 << Pass). Channels are laid out in Pass order, each pass's in its order.
using PassSet = uint32_t;
constexpr PassSet k_all_passes = (1u << k_pass_kinds) - 1;
constexpr bool has_pass(PassSet set, Pass p) { return (set >> static_cast<int>(p)) & 1u; }

struct PassInfo {
  const char* key;       // in scene files and on the command line
  const char* exr_name;  // Blender's pass name
  const char* channels;  // one letter per channel, as Blender names them
};
const PassInfo& pass_info(Pass p);

// Floats per pixel of the passes in `set`.
int pass_channel_count(PassSet set);
// "ViewLayer.<pass>.<channel>" for each channel of `set`, in layout order.
std::vector<std::string> pass_channel_names(PassSet set);
// The beauty's channel names in a multi-layer file: ViewLayer.Combined.R, .G, .B, .A.
std::vector<std::string> combined_channel_names();
// A multi-layer file's channels: the beauty's (R, G, B, A), then the passes'.
std::vector<std::string> layered_channel_names(PassSet set);

// "albedo,normal,depth" (or "all"; "" or "none" is no pass). nullopt with `error` naming the
// unknown word and the known ones.
std::optional<PassSet> parse_pass_list(const std::string& text, std::string& error);
// The keys of `set`, comma-separated, in layout order ("" for none).
std::string pass_list_text(PassSet set);

}  // namespace rt
