// Perspective camera with an optional thin lens (focal blur, like POV-Ray's aperture), or an
// orthographic one (glTF).
#pragma once

#include "math/ray.h"
#include "math/vec.h"
#include "scene/scene_desc.h"

namespace rt {

class Camera {
 public:
  Camera(const CameraKey& key, int width, int height);
  // `film` is a position in pixels (x right, y down from the top-left corner); `lens` in [0,1)^2.
  Ray generate(Vec2 film, Vec2 lens) const;
  Vec3 position() const { return m_position; }
  Vec3 forward() const { return m_forward; }  // unit: the view axis

 private:
  Vec3 m_position, m_right, m_up, m_forward;
  float m_tan_half_fov, m_ortho_half_height, m_aspect;
  float m_scale_x, m_scale_y;  // film pixel -> screen plane, precomputed (no per-ray division)
  float m_lens_radius, m_focus_distance;
  int m_width, m_height;
};

}  // namespace rt
