// The small amount of behaviour the plain scene description carries: printable source
// locations and camera keyframe interpolation.
#include "scene/scene_desc.h"

#include <algorithm>

namespace rt {

const char* integrator_name(IntegratorKind kind) { return kind == IntegratorKind::whitted ? "whitted" : "path"; }

std::optional<IntegratorKind> parse_integrator(const std::string& name) {
  if (name == "whitted") return IntegratorKind::whitted;
  if (name == "path") return IntegratorKind::path;
  return std::nullopt;
}

std::string render_settings_problem(const RenderSettings& s) {
  // In the order a scene file's [render] table is read, so the first problem is the one it names.
  if (std::string p = int_limit_problem("width", s.width, 1, k_max_image_side); !p.empty()) return p;
  if (std::string p = int_limit_problem("height", s.height, 1, k_max_image_side); !p.empty()) return p;
  if (int64_t{s.width} * s.height > k_max_image_pixels)
    return "width * height must be at most " + std::to_string(k_max_image_pixels) + " pixels, got " +
           std::to_string(int64_t{s.width} * s.height);
  if (std::string p = int_limit_problem("spp", s.spp, 1, k_max_spp); !p.empty()) return p;
  if (std::string p = int_limit_problem("max_depth", s.max_depth, 0, k_max_bounces); !p.empty()) return p;
  return int_limit_problem("frames", s.frames, 1, k_max_frames);
}

std::string SourceLoc::str() const {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

float lerp_float(float a, float b, float t) { return a * (1 - t) + b * t; }

CameraKey lerp_key(const CameraKey& a, const CameraKey& b, float t) {
  CameraKey k;
  k.position = lerp(a.position, b.position, t);
  k.look_at = lerp(a.look_at, b.look_at, t);
  k.up = lerp(a.up, b.up, t);
  k.fov_degrees = lerp_float(a.fov_degrees, b.fov_degrees, t);
  k.aperture = lerp_float(a.aperture, b.aperture, t);
  k.focus_distance = lerp_float(a.focus_distance, b.focus_distance, t);
  k.ortho_height = lerp_float(a.ortho_height, b.ortho_height, t);
  return k;
}

}  // namespace

CameraKey CameraDesc::at_frame(int frame) const {
  if (keyframes.empty()) return key;
  if (frame <= keyframes.front().frame) return keyframes.front().key;
  if (frame >= keyframes.back().frame) return keyframes.back().key;
  // First keyframe strictly after `frame`; the one before it is at or before `frame`.
  auto next = std::upper_bound(keyframes.begin(), keyframes.end(), frame,
                               [](int f, const CameraKeyframe& k) { return f < k.frame; });
  const CameraKeyframe& b = *next;
  const CameraKeyframe& a = *(next - 1);
  if (a.frame == frame) return a.key;  // exact keyframes are returned bit-for-bit
  float t = static_cast<float>(frame - a.frame) / static_cast<float>(b.frame - a.frame);
  return lerp_key(a.key, b.key, t);
}

void use_camera(SceneDesc& scene, const std::string& which) {
  const NamedCamera* found = nullptr;
  for (const NamedCamera& c : scene.cameras)
    if (c.name == which) found = &c;
  if (!found && !which.empty() && std::all_of(which.begin(), which.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    size_t index = which.size() <= 9 ? std::stoul(which) : scene.cameras.size();
    if (index < scene.cameras.size()) found = &scene.cameras[index];
  }
  if (!found) {
    std::string names;
    for (size_t i = 0; i < scene.cameras.size(); ++i) {
      names += (i ? ", " : "") + std::to_string(i) + " '" + scene.cameras[i].name + "'";
    }
    throw SceneError(scene.path + ": no camera '" + which + "'; " +
                     (names.empty() ? std::string("the scene defines no named cameras") : "cameras: " + names));
  }
  scene.camera.key = found->key;
  scene.camera.keyframes.clear();
  scene.camera_aspect = found->aspect_ratio;
}

}  // namespace rt
