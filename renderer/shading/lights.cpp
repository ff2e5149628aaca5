#include "shading/lights.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/warp.h"

namespace rt {

namespace {
constexpr float k_infinity = std::numeric_limits<float>::infinity();

float smoothstep(float e0, float e1, float x) {
  if (e1 <= e0) return x >= e1 ? 1.0f : 0.0f;
  float t = std::clamp((x - e0) / (e1 - e0), 0.0f, 1.0f);
  return t * t * (3 - 2 * t);
}
}  // namespace

void LightSet::add(const LightDesc& desc) {
  Light l;
  l.kind = desc.kind == LightKind::point ? Kind::point : desc.kind == LightKind::spot ? Kind::spot : Kind::directional;
  l.delta_index = static_cast<int>(m_delta.size());
  m_delta.push_back(desc);
  m_delta.back().direction = normalize(desc.direction);
  m_lights.push_back(l);
}

int LightSet::add_triangle(Vec3 p0, Vec3 p1, Vec3 p2, Color emission, bool two_sided, const EmissionTexture* texture,
                           Color mean_texture) {
  Light l;
  l.kind = Kind::triangle;
  l.p0 = p0;
  l.e1 = p1 - p0;
  l.e2 = p2 - p0;
  Vec3 c = cross(l.e1, l.e2);
  l.area = 0.5f * length(c);
  l.n = normalize(c);
  l.emission = emission;
  l.two_sided = two_sided;
  if (!(l.area > 0)) return -1;
  if (texture) {
    l.texture = static_cast<int>(m_emission_textures.size());
    l.mean_texture = mean_texture;
    m_emission_textures.push_back(*texture);
  }
  m_lights.push_back(l);
  return static_cast<int>(m_lights.size() - 1);
}

int LightSet::add_sphere(Vec3 center, float radius, Color emission) {
  Light l;
  l.kind = Kind::sphere;
  l.p0 = center;
  l.e1 = {radius, 0, 0};
  l.area = 4 * k_pi * radius * radius;
  l.emission = emission;
  m_lights.push_back(l);
  return static_cast<int>(m_lights.size() - 1);
}

void LightSet::finalize(float scene_radius) {
  m_scene_radius = std::max(scene_radius, 1e-3f);
  // A constant environment is left to BSDF sampling: for it, a BSDF-sampled direction carries
  // exactly f cos / pdf times the sky, while a light sample drawn uniformly over the sphere wastes
  // half its directions below the surface and, under MIS, only adds variance and a shadow ray.
  // Cycles does the same ("Background MIS has been disabled" for a background that does not vary).
  if (m_env && !m_env->is_black() && !m_env->is_constant()) {
    Light l;
    l.kind = Kind::environment;
    m_lights.push_back(l);
    m_env_index = static_cast<int>(m_lights.size() - 1);
  }
  const float disk = k_pi * m_scene_radius * m_scene_radius;
  for (Light& l : m_lights) {
    switch (l.kind) {
      case Kind::point: l.power = 4 * k_pi * luminance(m_delta[l.delta_index].intensity); break;
      case Kind::spot: {
        const LightDesc& d = m_delta[l.delta_index];
        float outer = (d.cone_degrees + d.falloff_degrees) * k_pi / 180.0f;
        l.power = 2 * k_pi * (1 - std::cos(std::min(outer, k_pi))) * luminance(d.intensity);
        break;
      }
      case Kind::directional: l.power = disk * luminance(m_delta[l.delta_index].intensity); break;
      case Kind::triangle:
        l.power = k_pi * l.area * luminance(l.emission * l.mean_texture) * (l.two_sided ? 2 : 1);
        break;
      case Kind::sphere: l.power = k_pi * l.area * luminance(l.emission); break;
      case Kind::environment: l.power = 0; break;  // set below
    }
    l.power = std::max(l.power, 0.0f);
  }
  // The environment's "power" depends on the scene's extent, which one large ground plane
  // inflates by orders of magnitude and so starves every other light. Give it a fixed half
  // of the samples instead when other lights exist (MIS with BSDF sampling covers the rest).
  // A few delta lights are cheap (one shadow ray each, no sampling): the path tracer lights
  // every vertex by all of them and leaves them out of the selection, which then only has to
  // choose among lights with extent. Selecting a sun against a sky instead made each noisy.
  m_deltas_apart = !m_delta.empty() && m_delta.size() <= k_max_deltas_sampled_apart;
  if (m_deltas_apart)
    for (Light& l : m_lights)
      if (l.delta_index >= 0) l.power = 0;
  double others = 0;
  for (const Light& l : m_lights)
    if (l.kind != Kind::environment) others += l.power;
  if (m_env_index >= 0) m_lights[m_env_index].power = others > 0 ? static_cast<float>(others) : 1.0f;
  m_cdf.assign(m_lights.size() + 1, 0.0f);
  double total = 0;
  for (size_t i = 0; i < m_lights.size(); ++i) {
    total += m_lights[i].power;
    m_cdf[i + 1] = static_cast<float>(total);
  }
  // Lights that emit nothing (and delta lights sampled apart) are never selected; with
  // nothing left to select, sample() finds nothing.
  m_selectable = total > 0;
  for (size_t i = 1; i < m_cdf.size(); ++i) m_cdf[i] = m_selectable ? static_cast<float>(m_cdf[i] / total) : 0.0f;
  if (m_selectable) m_cdf.back() = 1.0f;

  m_area_index.clear();
  m_area_cdf.assign(1, 0.0f);
  double area_total = 0;
  for (size_t i = 0; i < m_lights.size(); ++i) {
    if (m_lights[i].kind != Kind::triangle && m_lights[i].kind != Kind::sphere) continue;
    m_area_index.push_back(static_cast<int>(i));
    area_total += m_lights[i].power;
    m_area_cdf.push_back(static_cast<float>(area_total));
  }
  for (float& c : m_area_cdf) c = area_total > 0 ? static_cast<float>(c / area_total) : 0.0f;
  if (area_total > 0) m_area_cdf.back() = 1.0f;
  m_area_total = static_cast<float>(area_total);
}

LightSample LightSet::sample_area(Vec3 p, float u_select, Vec2 u) const {
  if (!(m_area_total > 0)) return {};
  auto it = std::upper_bound(m_area_cdf.begin(), m_area_cdf.end(), u_select);
  int k = std::clamp(static_cast<int>(it - m_area_cdf.begin()) - 1, 0, static_cast<int>(m_area_index.size()) - 1);
  float select = m_area_cdf[k + 1] - m_area_cdf[k];
  if (!(select > 0)) return {};
  return sample_light(m_area_index[k], select, p, u);
}

float LightSet::selection_pdf(int index) const {
  if (index < 0 || index >= static_cast<int>(m_lights.size())) return 0;
  return m_cdf[index + 1] - m_cdf[index];
}

LightSample LightSet::sample_delta(const LightDesc& d, Vec3 p) {
  LightSample s;
  s.pdf = 1;
  s.is_delta = true;
  if (d.kind == LightKind::directional) {
    s.wi = -d.direction;
    s.distance = k_infinity;
    s.radiance = d.intensity;
    return s;
  }
  Vec3 to_light = d.position - p;
  float dist2 = length_squared(to_light);
  if (!(dist2 > 0)) return s;
  s.distance = std::sqrt(dist2);
  s.wi = to_light / s.distance;
  s.radiance = d.intensity / dist2;
  if (d.kind == LightKind::spot) {
    float angle = std::acos(std::clamp(dot(-s.wi, d.direction), -1.0f, 1.0f)) * 180.0f / k_pi;
    s.radiance *= 1 - smoothstep(d.cone_degrees, d.cone_degrees + d.falloff_degrees, angle);
  }
  return s;
}

LightSample LightSet::sample(Vec3 p, float u_select, Vec2 u) const {
  LightSample s;
  if (!m_selectable) return s;
  auto it = std::upper_bound(m_cdf.begin(), m_cdf.end(), u_select);
  int index = std::clamp(static_cast<int>(it - m_cdf.begin()) - 1, 0, static_cast<int>(m_lights.size()) - 1);
  return sample_light(index, selection_pdf(index), p, u);
}

LightSample LightSet::sample_light(int index, float select, Vec3 p, Vec2 u) const {
  LightSample s;
  if (!(select > 0)) return s;
  const Light& l = m_lights[index];
  switch (l.kind) {
    case Kind::point:
    case Kind::spot:
    case Kind::directional:
      s = sample_delta(m_delta[l.delta_index], p);
      s.pdf = select;
      return s;
    case Kind::triangle: {
      Vec2 b = square_to_triangle(u);
      Vec3 y = l.p0 + l.e1 * b.x + l.e2 * b.y;
      Vec3 d = y - p;
      float dist2 = length_squared(d);
      if (!(dist2 > 0)) return s;
      s.distance = std::sqrt(dist2);
      s.wi = d / s.distance;
      float cos_l = -dot(s.wi, l.n);
      if (l.two_sided) cos_l = std::fabs(cos_l);
      if (cos_l <= 0) return s;
      s.radiance = l.emission;
      if (l.texture >= 0 && m_textures) {
        const EmissionTexture& t = m_emission_textures[l.texture];
        float b0 = 1 - b.x - b.y;
        HitUvs uvs{t.corners[0].uv0 * b0 + t.corners[1].uv0 * b.x + t.corners[2].uv0 * b.y,
                   t.corners[0].uv1 * b0 + t.corners[1].uv1 * b.x + t.corners[2].uv1 * b.y};
        s.radiance *= m_textures->color(t.ref, y, uvs);
      }
      s.pdf = select * dist2 / (cos_l * l.area);
      return s;
    }
    case Kind::sphere: {
      float r = l.e1.x;
      Vec3 to_c = l.p0 - p;
      float dc2 = length_squared(to_c);
      if (dc2 <= r * r) return s;  // inside the emitter: no direct sampling
      float dc = std::sqrt(dc2);
      float sin2 = r * r / dc2;
      float cos_max = std::sqrt(std::max(0.0f, 1 - sin2));
      Frame f(to_c / dc);
      s.wi = f.to_world(square_to_cone(u, cos_max));
      // Distance to the sphere along wi (nearest root).
      float b = dot(s.wi, to_c);
      float disc = b * b - (dc2 - r * r);
      s.distance = b - std::sqrt(std::max(0.0f, disc));
      s.radiance = l.emission;
      s.pdf = select / (2 * k_pi * (1 - cos_max));
      return s;
    }
    case Kind::environment: {
      EnvSample e = m_env->sample(u);
      s.wi = e.direction;
      s.distance = k_infinity;
      s.radiance = e.radiance;
      s.pdf = select * e.pdf;
      return s;
    }
  }
  return s;
}

float LightSet::pdf_hit(int index, Vec3 p, Vec3 y, Vec3 ny) const {
  float select = selection_pdf(index);
  if (!(select > 0)) return 0;
  const Light& l = m_lights[index];
  if (l.kind == Kind::triangle) {
    Vec3 d = y - p;
    float dist2 = length_squared(d);
    float cos_l = std::fabs(dot(normalize(d), l.n));
    if (!(cos_l > 0)) return 0;
    return select * dist2 / (cos_l * l.area);
  }
  if (l.kind == Kind::sphere) {
    float r = l.e1.x;
    float dc2 = length_squared(l.p0 - p);
    if (dc2 <= r * r) return 0;
    float cos_max = std::sqrt(std::max(0.0f, 1 - r * r / dc2));
    return select / (2 * k_pi * (1 - cos_max));
  }
  return 0;
}

float LightSet::pdf_environment(Vec3 direction) const {
  if (m_env_index < 0) return 0;
  return selection_pdf(m_env_index) * m_env->pdf(direction);
}

}  // namespace rt
