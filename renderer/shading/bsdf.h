// Scattering at a surface point for every material kind, in the shading frame.
// Conventions: directions point away from the surface; `wo` towards the viewer; eval()
// returns f(wo, wi) * |cos(theta_i)|; sample() returns that divided by the pdf.
#pragma once

#include <optional>

#include "math/vec.h"
#include "scene/scene_desc.h"

namespace rt {

enum class Lobe { diffuse, glossy, specular_reflection, specular_transmission };

struct BsdfSample {
  Vec3 wi;
  Color weight;     // f * |cos| / pdf
  float pdf = 0;    // solid angle; for delta lobes the discrete probability of the lobe
  bool is_delta = false;
  Lobe lobe = Lobe::diffuse;
};

// A material's scattering parameters at one point (textures already looked up).
struct BsdfParams {
  MaterialKind kind = MaterialKind::diffuse;  // not pbr: that is resolved into a plastic first
  Color albedo{0.8f};
  Color specular{0.04f};
  float roughness = 0.2f;
  float ior = 1.5f;
};

class Bsdf {
 public:
  // `n` is the shading normal; `front` says the ray arrived on the side the geometric normal
  // faces (needed by glass to choose the relative index of refraction).
  Bsdf(const BsdfParams& params, Vec3 n, bool front);

  Color eval(Vec3 wo, Vec3 wi) const;
  float pdf(Vec3 wo, Vec3 wi) const;
  std::optional<BsdfSample> sample(Vec3 wo, float u_lobe, Vec2 u) const;

  // True when every lobe is a delta (mirror, glass): light sampling cannot help.
  bool is_delta() const { return m_kind == MaterialKind::mirror || m_kind == MaterialKind::glass; }
  bool is_absorbing() const { return m_kind == MaterialKind::emissive; }
  MaterialKind kind() const { return m_kind; }
  Color albedo() const { return m_albedo; }
  const Vec3& normal() const { return m_frame.n; }
  // Fresnel reflectance of the specular layer for direction wo (plastic/metal), for Whitted.
  Color specular_reflectance(Vec3 wo) const;
  float ior() const { return m_ior; }
  bool front() const { return m_front; }

 private:
  float specular_probability(Vec3 wo_local) const;
  MaterialKind m_kind;
  Color m_albedo;
  Color m_specular;
  float m_alpha;  // GGX roughness parameter
  float m_ior;
  bool m_front;
  Frame m_frame;
};

// Unpolarised Fresnel reflectance of a dielectric; eta = n_transmitted / n_incident.
float fresnel_dielectric(float cos_i, float eta);
Color fresnel_schlick(Color f0, float cos_theta);

}  // namespace rt
