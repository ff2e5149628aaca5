// Every light the integrators can sample: delta lights from the scene file, emissive
// triangles and spheres found in the geometry, and an environment that varies (a constant one
// is left to BSDF sampling). A few delta lights are all evaluated at every shading point; among
// the rest one is picked with probability proportional to its estimated power.
#pragma once

#include <vector>

#include "math/vec.h"
#include "scene/scene_desc.h"
#include "shading/environment.h"
#include "shading/texture.h"

namespace rt {

struct LightSample {
  Vec3 wi;               // from the shading point towards the light
  float distance = 0;    // to the sampled point; infinity for directional/environment
  Color radiance;        // arriving along -wi (for delta lights: intensity / distance^2)
  float pdf = 0;         // solid angle density times selection probability (delta: selection only)
  bool is_delta = false;
};

// The texture that modulates a triangle emitter, and its corners' texture coordinates.
struct EmissionTexture {
  TextureRef ref;
  HitUvs corners[3];
};

class LightSet {
 public:
  void add(const LightDesc& desc);
  // Returns the light's index, to be found again when a ray hits the emitter. A textured
  // emitter's radiance is emission * texture at the sampled point; `mean_texture` (the
  // texture's average over the triangle, estimated by the caller) sets its share of samples.
  int add_triangle(Vec3 p0, Vec3 p1, Vec3 p2, Color emission, bool two_sided,
                   const EmissionTexture* texture = nullptr, Color mean_texture = Color{1.0f});
  // The store textured emitters read from (owned by the scene; must outlive this set).
  void set_textures(const TextureStore* textures) { m_textures = textures; }
  int add_sphere(Vec3 center, float radius, Color emission);
  void set_environment(const Environment* env) { m_env = env; }
  // Call once after adding everything; `scene_radius` bounds the geometry (for distant lights).
  void finalize(float scene_radius);

  bool empty() const { return m_lights.empty(); }
  size_t size() const { return m_lights.size(); }
  const std::vector<LightDesc>& delta_lights() const { return m_delta; }

  // Delta lights the path tracer evaluates at every vertex, outside sample(): all of them when
  // there are at most k_max_deltas_sampled_apart, else none (then sample() selects them too).
  static constexpr size_t k_max_deltas_sampled_apart = 8;
  const std::vector<LightDesc>& deltas_sampled_apart() const { return m_deltas_apart ? m_delta : m_no_deltas; }

  // One light chosen by power among the rest (area lights, environment, deltas if not apart).
  LightSample sample(Vec3 p, float u_select, Vec2 u) const;
  // Like sample(), but only among area emitters (triangles, spheres), chosen by power.
  // Whitted uses it for soft shadows; returns pdf 0 if the scene has no area emitters.
  LightSample sample_area(Vec3 p, float u_select, Vec2 u) const;
  bool has_area_lights() const { return m_area_total > 0; }
  // Density (as in LightSample::pdf) of having sampled point `y` with normal `ny` on light
  // `index` from `p`; used for MIS when a BSDF-sampled ray hits an emitter.
  float pdf_hit(int index, Vec3 p, Vec3 y, Vec3 ny) const;
  float pdf_environment(Vec3 direction) const;
  // Light arriving at `p` from one point/spot/directional light (pdf 1, is_delta).
  static LightSample sample_delta(const LightDesc& d, Vec3 p);

 private:
  enum class Kind { point, spot, directional, triangle, sphere, environment };
  struct Light {
    Kind kind;
    int delta_index = -1;  // into m_delta
    Vec3 p0, e1, e2, n;    // triangle (n unit), sphere: p0 = centre, e1.x = radius
    float area = 0;
    Color emission;
    bool two_sided = false;
    float power = 0;
    int texture = -1;      // into m_emission_textures
    Color mean_texture{1.0f};
  };
  float selection_pdf(int index) const;
  LightSample sample_light(int index, float select, Vec3 p, Vec2 u) const;

  std::vector<Light> m_lights;
  std::vector<LightDesc> m_delta;
  std::vector<EmissionTexture> m_emission_textures;
  const TextureStore* m_textures = nullptr;
  std::vector<float> m_cdf;  // size n + 1
  std::vector<int> m_area_index;     // lights that are triangles or spheres
  std::vector<float> m_area_cdf;     // size m_area_index.size() + 1
  float m_area_total = 0;
  bool m_deltas_apart = false;
  bool m_selectable = false;
  std::vector<LightDesc> m_no_deltas;
  const Environment* m_env = nullptr;
  int m_env_index = -1;
  float m_scene_radius = 1;
};

}  // namespace rt
