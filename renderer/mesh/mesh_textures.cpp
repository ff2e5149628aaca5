#include "mesh/mesh_textures.h"

#include <assimp/ObjMaterial.h>
#include <assimp/material.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

namespace fs = std::filesystem;

namespace rt {

// The texture's file name and wrap mode (MTL `-clamp on` gives clamp; the default repeats).
struct NamedTexture {
  std::string name;
  TextureWrap wrap = TextureWrap::repeat;
};

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool texture_name(const aiMaterial& m, aiTextureType type, NamedTexture& out) {
  if (m.GetTextureCount(type) == 0) return false;
  aiString path;
  aiTextureMapMode modes[2] = {aiTextureMapMode_Wrap, aiTextureMapMode_Wrap};
  if (m.GetTexture(type, 0, &path, nullptr, nullptr, nullptr, nullptr, modes) != aiReturn_SUCCESS || path.length == 0) {
    return false;
  }
  out.name = path.C_Str();
  out.wrap = modes[0] == aiTextureMapMode_Clamp   ? TextureWrap::clamp
             : modes[0] == aiTextureMapMode_Mirror ? TextureWrap::mirror
                                                   : TextureWrap::repeat;
  return !out.name.empty() && out.name[0] != '*';  // "*0": an embedded FBX texture, not supported here
}

}  // namespace

std::string find_material_texture(const std::string& dir, const std::string& name) {
  std::error_code ec;
  std::string slashed = name;
  std::replace(slashed.begin(), slashed.end(), '\\', '/');
  for (const std::string& candidate : {name, slashed}) {
    fs::path p = fs::path(candidate).is_absolute() ? fs::path(candidate) : fs::path(dir) / candidate;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  fs::path wanted = fs::path(dir) / slashed;
  fs::path folder = wanted.parent_path();
  std::string file = lower(wanted.filename().string());
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    if (lower(entry.path().filename().string()) == file && entry.is_regular_file(ec)) {
      return entry.path().lexically_normal().string();
    }
  }
  return {};
}

MeshTextureList::MeshTextureList(std::string file_path, std::vector<TextureDesc>& textures)
    : m_file(std::move(file_path)), m_dir(fs::path(m_file).parent_path().string()), m_textures(textures) {}

int MeshTextureList::slot(const NamedTexture& t, const std::string& material) {
  const std::string& name = t.name;
  std::string path = find_material_texture(m_dir, name);
  if (path.empty()) {
    throw SceneError(m_file + ": material '" + material + "' names texture '" + name + "', which was not found in " +
                     m_dir);
  }
  for (size_t i = 0; i < m_textures.size(); ++i)
    if (m_textures[i].path == path && m_textures[i].wrap_s == t.wrap) return static_cast<int>(i);
  TextureDesc d;
  d.wrap_s = d.wrap_t = t.wrap;
  d.name = fs::path(path).filename().string();
  d.kind = TextureKind::image;
  d.path = path;
  d.loc = {m_file, 0, 0};
  m_textures.push_back(std::move(d));
  return static_cast<int>(m_textures.size() - 1);
}

void MeshTextureList::read(const aiMaterial& source, MaterialDesc& m) {
  NamedTexture name;
  if (texture_name(source, aiTextureType_DIFFUSE, name) || texture_name(source, aiTextureType_BASE_COLOR, name)) {
    m.albedo.texture = slot(name, m.name);
    // MTL: the map multiplies Kd, but exporters write "Kd 0.8" next to a full-colour map
    // meaning "the map"; Blender's importer, too, uses the map alone.
    m.albedo.value = Color{1.0f};
  }
  float dissolve = 1.0f;
  if (source.Get(AI_MATKEY_OPACITY, dissolve) == aiReturn_SUCCESS && std::isfinite(dissolve) && dissolve < 0.999f &&
      m.kind != MaterialKind::glass) {
    m.alpha = std::clamp(dissolve, 0.0f, 1.0f);
    m.alpha_mode = AlphaMode::blend;
  }
  if (texture_name(source, aiTextureType_OPACITY, name)) {
    m.opacity_map.texture = slot(name, m.name);
    m.opacity_channel = 0;  // map_d is a grey map (a colour map's first channel)
    m.alpha_mode = AlphaMode::mask;
    m.alpha_cutoff = 0.5f;
  }
  if (texture_name(source, aiTextureType_NORMALS, name)) {
    m.normal_map.texture = slot(name, m.name);
  } else if (texture_name(source, aiTextureType_HEIGHT, name)) {
    m.bump_map.texture = slot(name, m.name);
    float multiplier = 1.0f;
    if (source.Get(AI_MATKEY_OBJ_BUMPMULT_HEIGHT(0), multiplier) != aiReturn_SUCCESS || !std::isfinite(multiplier)) {
      multiplier = 1.0f;
    }
    m.bump_scale = k_default_bump_scale * multiplier;
  }
  if (texture_name(source, aiTextureType_EMISSIVE, name)) {
    m.emission_map.texture = slot(name, m.name);
    aiColor3D ke(0, 0, 0);
    source.Get(AI_MATKEY_COLOR_EMISSIVE, ke);
    Color factor{ke.r, ke.g, ke.b};
    // map_Ke with Ke 0 (or no Ke) means "the map is the emission".
    m.emission = is_finite(factor) && !is_black(factor) ? max(factor, Color{0.0f}) : Color{1.0f};
  }
}

}  // namespace rt
