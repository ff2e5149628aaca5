#include "mesh/mesh_materials.h"

#include <algorithm>
#include <cmath>

#include <assimp/ObjMaterial.h>
#include <assimp/material.h>

namespace rt {

namespace {

// Below this, a diffuse colour counts as black: MTL mirrors are written "Kd 0.01 0.01 0.01".
constexpr float k_dark_diffuse = 0.05f;
// Phong exponents at least this high with a dark diffuse colour mean "mirror" in MTL files.
constexpr float k_mirror_shininess = 500.0f;
constexpr float k_min_roughness = 0.001f;

float clamp01(float v, float fallback) { return std::isfinite(v) ? std::clamp(v, 0.0f, 1.0f) : fallback; }

// Reflectances must lie in [0, 1] or the integrators gain energy; files do not always agree.
Color reflectance(Color c, float fallback) {
  return {clamp01(c.x, fallback), clamp01(c.y, fallback), clamp01(c.z, fallback)};
}

// Radiance has no upper bound, but NaN/Inf/negative values would poison every pixel they reach.
Color radiance(Color c) {
  auto fix = [](float v) { return std::isfinite(v) && v > 0 ? v : 0.0f; };
  return {fix(c.x), fix(c.y), fix(c.z)};
}

float clamp_roughness(float r) {
  return std::isfinite(r) ? std::clamp(r, k_min_roughness, 1.0f) : 1.0f;
}

bool get_color(const aiMaterial& m, const char* key, unsigned type, unsigned index, Color& out) {
  aiColor3D c;
  if (m.Get(key, type, index, c) != aiReturn_SUCCESS) return false;
  out = {c.r, c.g, c.b};
  return true;
}

bool get_float(const aiMaterial& m, const char* key, unsigned type, unsigned index, float& out) {
  return m.Get(key, type, index, out) == aiReturn_SUCCESS;
}

bool get_int(const aiMaterial& m, const char* key, unsigned type, unsigned index, int& out) {
  return m.Get(key, type, index, out) == aiReturn_SUCCESS;
}

bool has_texture(const aiMaterial& m, aiTextureType type) { return m.GetTextureCount(type) > 0; }

// glTF puts metallic and roughness in one texture (assimp: UNKNOWN, and in some versions
// METALNESS / DIFFUSE_ROUGHNESS too); with one present the factors are only multipliers.
bool has_metal_roughness_texture(const aiMaterial& m) {
  return has_texture(m, aiTextureType_UNKNOWN) || has_texture(m, aiTextureType_METALNESS) ||
         has_texture(m, aiTextureType_DIFFUSE_ROUGHNESS);
}

Color base_color(const aiMaterial& m) {
  Color c{0.8f};
  // glTF's base colour is also copied to DIFFUSE by assimp; prefer BASE_COLOR when present.
  if (!get_color(m, AI_MATKEY_BASE_COLOR, c)) get_color(m, AI_MATKEY_COLOR_DIFFUSE, c);
  return reflectance(c, 0.8f);
}

// Emission is taken only when it is uniform: an emissive texture (DamagedHelmet) masks the
// factor, and treating the factor alone as the radiance would turn the whole mesh into a lamp.
Color uniform_emission(const aiMaterial& m) {
  if (has_texture(m, aiTextureType_EMISSIVE) || has_texture(m, aiTextureType_EMISSION_COLOR)) return Color{0.0f};
  Color e{0.0f};
  get_color(m, AI_MATKEY_COLOR_EMISSIVE, e);
  float strength = 1.0f;  // glTF KHR_materials_emissive_strength
  if (get_float(m, AI_MATKEY_EMISSIVE_INTENSITY, strength) && std::isfinite(strength) && strength >= 0) e *= strength;
  return radiance(e);
}

// Phong exponent -> our roughness (GGX alpha = roughness^2), via the usual Beckmann
// correspondence alpha = sqrt(2 / (n + 2)).
float roughness_from_phong(float shininess) {
  if (!std::isfinite(shininess) || shininess <= 0) return 1.0f;
  float alpha = std::sqrt(2.0f / (shininess + 2.0f));
  return clamp_roughness(std::sqrt(alpha));
}

// MTL's Ni is often a placeholder (1.0) even on glass; an IOR of 1 would make glass invisible.
float sane_ior(float ni) { return std::isfinite(ni) && ni > 1.01f && ni <= 3.0f ? ni : 1.5f; }

// glTF metallic-roughness (any material carrying a metallic factor).
void classify_pbr(const aiMaterial& m, float metallic, MaterialDesc& d) {
  float transmission = 0;
  if (get_float(m, AI_MATKEY_TRANSMISSION_FACTOR, transmission) && transmission > 0.5f) {
    d.kind = MaterialKind::glass;
    float ior = 1.5f;
    get_float(m, AI_MATKEY_REFRACTI, ior);
    d.ior = sane_ior(ior);
    return;
  }
  if (metallic > 0.5f && !has_metal_roughness_texture(m)) {
    float roughness = 1.0f;
    get_float(m, AI_MATKEY_ROUGHNESS_FACTOR, roughness);
    d.kind = MaterialKind::metal;
    d.roughness = clamp_roughness(roughness);
  }
}

bool is_glass_illum(int illum) { return illum == 4 || illum == 6 || illum == 7 || illum == 9; }
bool is_reflective_illum(int illum) { return illum == 3 || illum == 5 || illum == 8; }

// Wavefront MTL (and FBX/other Phong-style) materials: illum, Ks, Ns, Ni.
void classify_phong(const aiMaterial& m, MaterialDesc& d) {
  int illum = -1;
  get_int(m, AI_MATKEY_OBJ_ILLUM, illum);
  if (is_glass_illum(illum)) {
    // Tf is unreliable in the wild (McGuire's glass sphere has Tf 0.1): keep glass clear.
    float ni = 1.5f;
    get_float(m, AI_MATKEY_REFRACTI, ni);
    d.kind = MaterialKind::glass;
    d.albedo.value = Color{1.0f};
    d.ior = sane_ior(ni);
    return;
  }
  Color ks{0.0f};
  get_color(m, AI_MATKEY_COLOR_SPECULAR, ks);
  ks = reflectance(ks, 0.0f);
  if (is_black(ks)) return;
  float shininess = 0;
  get_float(m, AI_MATKEY_SHININESS, shininess);
  bool dark_diffuse = max_component(d.albedo.value) < k_dark_diffuse;
  if (dark_diffuse && (is_reflective_illum(illum) || shininess >= k_mirror_shininess)) {
    d.kind = MaterialKind::mirror;
    d.albedo.value = ks;
    return;
  }
  d.kind = MaterialKind::plastic;
  d.specular = ks;
  d.roughness = roughness_from_phong(shininess);
}

}  // namespace

MaterialDesc default_mesh_material() {
  MaterialDesc d;
  d.name = "default";
  d.kind = MaterialKind::diffuse;
  d.albedo.value = Color{0.8f};
  return d;
}

MaterialDesc convert_assimp_material(const aiMaterial& m) {
  MaterialDesc d;
  aiString name;
  if (m.Get(AI_MATKEY_NAME, name) == aiReturn_SUCCESS) d.name = name.C_Str();
  d.albedo.value = base_color(m);

  Color emission = uniform_emission(m);
  if (!is_black(emission)) {
    d.kind = MaterialKind::emissive;
    d.emission = emission;
    int two_sided = 0;  // glTF doubleSided; MTL has no notion of it
    d.two_sided = get_int(m, AI_MATKEY_TWOSIDED, two_sided) && two_sided != 0;
    return d;
  }
  float metallic = 0;
  if (get_float(m, AI_MATKEY_METALLIC_FACTOR, metallic)) {
    classify_pbr(m, metallic, d);
  } else {
    classify_phong(m, d);
  }
  return d;
}

}  // namespace rt
