// A job's render settings and their limits: what the farm's protocol, CLI and journal need of a
// scene without the rest of its description (scene_desc.h includes this).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "math/vec.h"
#include "scene/passes.h"

namespace rt {

enum class IntegratorKind { whitted, path };
// Its name in scene files, on the command line and in statistics ("whitted", "path").
const char* integrator_name(IntegratorKind kind);
std::optional<IntegratorKind> parse_integrator(const std::string& name);

// How a pixel's samples are spread around its centre (filter importance sampling: each sample
// lands where the filter puts weight, and the pixel is their plain mean, so a pixel still depends
// on its own samples only). `box` of width 1 covers the pixel square exactly.
enum class PixelFilter { box, gaussian, blackman_harris };

// Image limits, one place for every reader and checker (scene files, CLI, protocol, journal).
constexpr int k_max_image_side = 16384;
constexpr long long k_max_image_pixels = 1LL << 28;
// Render setting limits, likewise: samples per pixel and bounces.
constexpr int k_max_spp = 65536;
constexpr int k_max_bounces = 64;
// Frames of one job: a scene file's `frames`, a .blend's frame range, and every journal reader.
constexpr int k_max_frames = 100000;

struct RenderSettings {
  int width = 640;
  int height = 480;
  int spp = 16;                  // samples per pixel
  IntegratorKind integrator = IntegratorKind::path;
  int max_depth = 8;             // bounces after the camera ray (whitted: reflection/refraction depth)
  uint64_t seed = 0;             // mixed into every pixel's random numbers
  int frames = 1;                // frames are numbered 1..frames
  Color ambient{0.0f};           // whitted only: POV-Ray-like global ambient term (times albedo)
  float max_sample_value = 0.0f; // path only: clamp each sample's channels (0 = no clamp)
  PixelFilter filter = PixelFilter::blackman_harris;
  float filter_width = 3.0f;     // pixels: the filter's whole support along x and along y
  // Adaptive sampling (render/adaptive_sampling.h): a pixel stops taking samples once its own
  // error estimate, taken at fixed sample counts, is under the threshold; `spp` is then the
  // most a pixel takes. 0 = off: every pixel takes `spp`.
  float noise_threshold = 0.0f;
  int min_samples = 0;           // the first check's sample count; 0 = automatic (adaptive_sampling.h)
  PassSet passes = 0;            // what each pixel holds besides its colour (scene/passes.h)
};

// A whole-number setting outside [lo, hi] in the words a scene file's error uses ("'spp' must be
// an integer in 1..65536, got 100000"), so a value from elsewhere (a .blend, the command line)
// is refused as the same value in a TOML file would be; "" when it is inside.
std::string int_limit_problem(const std::string& key, int64_t value, int64_t lo, int64_t hi);

// The first of `s`'s size, pixels, spp, max_depth and frames outside the limits above, in those
// words; "" when every one is inside. What a scene of any kind must pass before it is rendered.
std::string render_settings_problem(const RenderSettings& s);

}  // namespace rt
