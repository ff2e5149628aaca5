#include "shading/bsdf.h"

#include <algorithm>
#include <cmath>

#include "sampling/warp.h"

namespace rt {

namespace {

// GGX (Trowbridge-Reitz) normal distribution and Smith masking, in the local frame.
// D = a^2 / (pi (cos^2 (a^2 - 1) + 1)^2), with the bracket written as cos^2 a^2 + sin^2 and
// sin^2 taken from h's tangential components: "c2 (a2 - 1) + 1" cancels catastrophically in
// float near the peak of a smooth lobe (glTF roughness near 0: alpha ~ 1e-4), which made D
// hundreds of times too small there and lost most of a smooth coat's reflection.
float ggx_d(Vec3 h, float alpha) {
  float a2 = alpha * alpha;
  float d = h.z * h.z * a2 + (h.x * h.x + h.y * h.y);
  return a2 / (k_pi * d * d);
}
float smith_g1(Vec3 v, float alpha) {
  float c = std::fabs(v.z);
  float a2 = alpha * alpha;
  return 2 * c / (c + std::sqrt(a2 + (1 - a2) * c * c));
}
Vec3 sample_ggx_half(Vec2 u, float alpha) {
  float tan2 = alpha * alpha * u.x / std::max(1 - u.x, 1e-7f);
  float cos_t = 1 / std::sqrt(1 + tan2);
  float sin_t = std::sqrt(tan2 / (1 + tan2));  // not sqrt(1 - cos^2): cos_t rounds to 1 for tiny tan2
  float phi = 2 * k_pi * u.y;
  return {sin_t * std::cos(phi), sin_t * std::sin(phi), cos_t};
}
// f * cos(wi) of a GGX microfacet reflection with Fresnel `f0` (Schlick).
Color ggx_reflection(Vec3 wo, Vec3 wi, float alpha, Color f0) {
  if (wo.z <= 0 || wi.z <= 0) return Color{0.0f};
  Vec3 h = normalize(wo + wi);
  float d = ggx_d(h, alpha);
  float g = smith_g1(wo, alpha) * smith_g1(wi, alpha);
  Color f = fresnel_schlick(f0, dot(wi, h));
  return f * (d * g / (4 * wo.z));  // (D G F / (4 cos_o cos_i)) * cos_i
}
float ggx_pdf(Vec3 wo, Vec3 wi, float alpha) {
  if (wo.z <= 0 || wi.z <= 0) return 0;
  Vec3 h = normalize(wo + wi);
  return ggx_d(h, alpha) * h.z / (4 * std::fabs(dot(wo, h)));
}

}  // namespace

float fresnel_dielectric(float cos_i, float eta) {
  cos_i = std::clamp(cos_i, -1.0f, 1.0f);
  if (cos_i < 0) {
    eta = 1 / eta;
    cos_i = -cos_i;
  }
  float sin2_t = (1 - cos_i * cos_i) / (eta * eta);
  if (sin2_t >= 1) return 1;  // total internal reflection
  float cos_t = std::sqrt(1 - sin2_t);
  float rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t);
  float rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t);
  return 0.5f * (rs * rs + rp * rp);
}

Color fresnel_schlick(Color f0, float cos_theta) {
  float m = std::clamp(1 - cos_theta, 0.0f, 1.0f);
  float m5 = m * m * m * m * m;
  return f0 + (Color{1.0f} - f0) * m5;
}

Bsdf::Bsdf(const BsdfParams& params, Vec3 n, bool front)
    : m_kind(params.kind),
      m_albedo(params.albedo),
      m_specular(params.specular),
      m_alpha(std::max(params.roughness * params.roughness, 1e-4f)),
      m_ior(params.ior),
      m_front(front),
      m_frame(n) {}

Color Bsdf::specular_reflectance(Vec3 wo) const {
  float c = std::fabs(dot(wo, m_frame.n));
  if (m_kind == MaterialKind::metal) return fresnel_schlick(m_albedo, c);
  if (m_kind == MaterialKind::plastic) return fresnel_schlick(m_specular, c);
  return Color{0.0f};
}

float Bsdf::specular_probability(Vec3 wo) const {
  // Plastic: split samples between the layers by their expected contribution.
  float spec = luminance(fresnel_schlick(m_specular, wo.z));
  float diff = luminance(m_albedo) * (1 - spec);
  float p = spec + diff > 0 ? spec / (spec + diff) : 0.5f;
  return std::clamp(p, 0.1f, 0.9f);
}

Color Bsdf::eval(Vec3 wo_w, Vec3 wi_w) const {
  Vec3 wo = m_frame.to_local(wo_w), wi = m_frame.to_local(wi_w);
  switch (m_kind) {
    case MaterialKind::diffuse:
      return (wo.z > 0 && wi.z > 0) ? m_albedo * (k_inv_pi * wi.z) : Color{0.0f};
    case MaterialKind::plastic: {
      if (wo.z <= 0 || wi.z <= 0) return Color{0.0f};
      // Diffuse base under a specular coat: the base sees what the coat lets through.
      Color through = Color{1.0f} - fresnel_schlick(m_specular, wo.z);
      return m_albedo * through * (k_inv_pi * wi.z) + ggx_reflection(wo, wi, m_alpha, m_specular);
    }
    case MaterialKind::metal:
      return ggx_reflection(wo, wi, m_alpha, m_albedo);
    default:
      return Color{0.0f};  // delta lobes and emitters have no finite density
  }
}

float Bsdf::pdf(Vec3 wo_w, Vec3 wi_w) const {
  Vec3 wo = m_frame.to_local(wo_w), wi = m_frame.to_local(wi_w);
  switch (m_kind) {
    case MaterialKind::diffuse:
      return (wo.z > 0 && wi.z > 0) ? wi.z * k_inv_pi : 0.0f;
    case MaterialKind::plastic: {
      if (wo.z <= 0 || wi.z <= 0) return 0;
      float ps = specular_probability(wo);
      return ps * ggx_pdf(wo, wi, m_alpha) + (1 - ps) * wi.z * k_inv_pi;
    }
    case MaterialKind::metal:
      return ggx_pdf(wo, wi, m_alpha);
    default:
      return 0;
  }
}

std::optional<BsdfSample> Bsdf::sample(Vec3 wo_w, float u_lobe, Vec2 u) const {
  Vec3 wo = m_frame.to_local(wo_w);
  BsdfSample s;
  switch (m_kind) {
    case MaterialKind::diffuse: {
      // Cosine sampling is the Lambertian's own density: the weight f cos / pdf is the albedo,
      // with no need to evaluate f and the pdf again in world space.
      if (wo.z <= 0) return std::nullopt;
      Vec3 wi = square_to_cosine_hemisphere(u);
      if (wi.z <= 0) return std::nullopt;
      s.wi = m_frame.to_world(wi);
      s.pdf = wi.z * k_inv_pi;
      s.weight = m_albedo;
      s.lobe = Lobe::diffuse;
      return s;
    }
    case MaterialKind::plastic:
    case MaterialKind::metal: {
      if (wo.z <= 0) return std::nullopt;
      Vec3 wi;
      bool specular_lobe = m_kind == MaterialKind::metal ||
                           (m_kind == MaterialKind::plastic && u_lobe < specular_probability(wo));
      if (specular_lobe) {
        Vec3 h = sample_ggx_half(u, m_alpha);
        wi = reflect(wo, h);
        s.lobe = Lobe::glossy;
      } else {
        wi = square_to_cosine_hemisphere(u);
        s.lobe = Lobe::diffuse;
      }
      if (wi.z <= 0) return std::nullopt;
      s.wi = m_frame.to_world(wi);
      s.pdf = pdf(wo_w, s.wi);
      if (!(s.pdf > 0)) return std::nullopt;
      s.weight = eval(wo_w, s.wi) / s.pdf;
      return s;
    }
    case MaterialKind::mirror: {
      if (wo.z <= 0) return std::nullopt;
      s.wi = m_frame.to_world({-wo.x, -wo.y, wo.z});
      s.weight = m_albedo;
      s.pdf = 1;
      s.is_delta = true;
      s.lobe = Lobe::specular_reflection;
      return s;
    }
    case MaterialKind::glass: {
      // The shading normal is oriented towards the viewer; `front` says which medium we are in.
      float eta = m_front ? m_ior : 1 / m_ior;  // n_transmitted / n_incident
      float cos_i = std::fabs(wo.z);
      float f = fresnel_dielectric(cos_i, eta);
      s.is_delta = true;
      if (u_lobe < f) {
        s.wi = m_frame.to_world({-wo.x, -wo.y, wo.z});
        s.weight = Color{1.0f};
        s.pdf = f;
        s.lobe = Lobe::specular_reflection;
        return s;
      }
      float sin2_t = (1 - cos_i * cos_i) / (eta * eta);
      float cos_t = std::sqrt(std::max(0.0f, 1 - sin2_t));
      Vec3 wt{-wo.x / eta, -wo.y / eta, -cos_t};
      s.wi = m_frame.to_world(normalize(wt));
      s.weight = m_albedo;  // transmission tint
      s.pdf = 1 - f;
      s.lobe = Lobe::specular_transmission;
      return s;
    }
    case MaterialKind::emissive:
    case MaterialKind::pbr:  // resolved into a plastic before a Bsdf is made
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace rt
