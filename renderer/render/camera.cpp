#include "render/camera.h"

#include <cmath>

#include "sampling/warp.h"

namespace rt {

Camera::Camera(const CameraKey& key, int width, int height)
    : m_position(key.position),
      m_tan_half_fov(key.ortho_height > 0 ? 1.0f : std::tan(0.5f * key.fov_degrees * k_pi / 180.0f)),
      m_ortho_half_height(0.5f * key.ortho_height),
      m_aspect(static_cast<float>(width) / static_cast<float>(height)),
      m_lens_radius(0.5f * key.aperture),
      m_focus_distance(key.focus_distance > 0 ? key.focus_distance : length(key.look_at - key.position)),
      m_width(width),
      m_height(height) {
  m_forward = normalize(key.look_at - key.position);
  m_right = normalize(cross(m_forward, key.up));
  m_up = cross(m_right, m_forward);
  m_scale_x = 2 * m_tan_half_fov * m_aspect / static_cast<float>(m_width);
  m_scale_y = 2 * m_tan_half_fov / static_cast<float>(m_height);
}

Ray Camera::generate(Vec2 film, Vec2 lens) const {
  float sx = film.x * m_scale_x - m_tan_half_fov * m_aspect;
  float sy = m_tan_half_fov - film.y * m_scale_y;
  if (m_ortho_half_height > 0) {
    // Parallel rays from the film rectangle (glTF orthographic: no lens).
    float h = m_ortho_half_height / m_tan_half_fov;
    return {m_position + m_right * (sx * h) + m_up * (sy * h), m_forward};
  }
  Vec3 dir = normalize(m_forward + m_right * sx + m_up * sy);
  if (m_lens_radius <= 0) return {m_position, dir};
  // Thin lens: every ray through the lens meets the pinhole ray on the plane of focus.
  float t_focus = m_focus_distance / dot(dir, m_forward);
  Vec3 focus = m_position + dir * t_focus;
  Vec2 d = square_to_disk(lens);
  Vec3 origin = m_position + m_right * (d.x * m_lens_radius) + m_up * (d.y * m_lens_radius);
  return {origin, normalize(focus - origin)};
}

}  // namespace rt
