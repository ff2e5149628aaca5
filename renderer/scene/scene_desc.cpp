// The small amount of behaviour the plain scene description carries: printable source
// locations and camera keyframe interpolation.
#include "scene/scene_desc.h"

#include <algorithm>

namespace rt {

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

}  // namespace rt
