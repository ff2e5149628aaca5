// glTF materials -> MaterialDesc: metallic-roughness with its textures, normal map, emission
// (KHR_materials_emissive_strength), alpha modes, KHR_texture_transform, and
// KHR_materials_transmission + KHR_materials_ior as glass.
#include <tiny_gltf.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "mesh/gltf_loader.h"
#include "mesh/mesh_materials.h"

namespace fs = std::filesystem;

namespace rt {

namespace {

float finite_or(double v, float fallback) { return std::isfinite(v) ? static_cast<float>(v) : fallback; }

Color color_of(const std::vector<double>& v, Color fallback) {
  if (v.size() < 3) return fallback;
  return {finite_or(v[0], fallback.x), finite_or(v[1], fallback.y), finite_or(v[2], fallback.z)};
}

uint64_t fnv1a(const std::vector<unsigned char>& bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ULL;
  return h;
}

std::string image_extension(const tinygltf::Image& img) {
  const auto& b = img.image;
  if (b.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') return ".png";
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return ".jpg";
  if (img.mimeType == "image/png") return ".png";
  if (img.mimeType == "image/jpeg") return ".jpg";
  return ".img";
}

// Writes the bytes once under a content-derived name (atomically: temp file + rename).
std::string extract_embedded(const tinygltf::Image& img, int index) {
  if (img.image.empty()) throw GltfError("image " + std::to_string(index) + " has no data");
  fs::path dir = embedded_image_dir();
  std::error_code ec;
  fs::create_directories(dir, ec);
  char name[40];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a(img.image)));
  fs::path target = dir / (std::string(name) + "-" + std::to_string(img.image.size()) + image_extension(img));
  if (fs::is_regular_file(target, ec) && fs::file_size(target, ec) == img.image.size()) return target.string();
  fs::path tmp = target;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(img.image.data()), static_cast<std::streamsize>(img.image.size()));
    if (!out) throw GltfError("cannot write embedded image " + std::to_string(index) + " to " + tmp.string());
  }
  fs::rename(tmp, target, ec);
  if (ec) throw GltfError("cannot store embedded image " + std::to_string(index) + ": " + ec.message());
  return target.string();
}

TextureWrap wrap_of(int gl_wrap) {
  if (gl_wrap == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE) return TextureWrap::clamp;
  if (gl_wrap == TINYGLTF_TEXTURE_WRAP_MIRRORED_REPEAT) return TextureWrap::mirror;
  return TextureWrap::repeat;
}

class MaterialReader {
 public:
  MaterialReader(const GltfDocument& doc, std::vector<TextureDesc>& textures)
      : m_doc(doc), m_model(*doc.model), m_textures(textures), m_texture_slot(m_model.textures.size(), -1) {}

  MaterialDesc read(const tinygltf::Material& g, int index) {
    MaterialDesc m;
    m.name = g.name.empty() ? "material " + std::to_string(index) : g.name;
    m.loc = {m_doc.path, 0, 0};
    m.kind = MaterialKind::pbr;
    m.vertex_colors = true;  // COLOR_0 multiplies the base colour; meshes without it give 1
    const auto& pbr = g.pbrMetallicRoughness;
    m.albedo.value = max(color_of(pbr.baseColorFactor, Color{1.0f}), Color{0.0f});
    m.alpha = pbr.baseColorFactor.size() == 4 ? finite_or(pbr.baseColorFactor[3], 1.0f) : 1.0f;
    texture(pbr.baseColorTexture.index, pbr.baseColorTexture.texCoord, pbr.baseColorTexture.extensions, m.albedo);
    m.metallic = std::clamp(finite_or(pbr.metallicFactor, 1.0f), 0.0f, 1.0f);
    m.roughness = std::clamp(finite_or(pbr.roughnessFactor, 1.0f), 0.001f, 1.0f);
    texture(pbr.metallicRoughnessTexture.index, pbr.metallicRoughnessTexture.texCoord,
            pbr.metallicRoughnessTexture.extensions, m.metallic_roughness);
    texture(g.normalTexture.index, g.normalTexture.texCoord, g.normalTexture.extensions, m.normal_map);
    m.normal_scale = finite_or(g.normalTexture.scale, 1.0f);
    m.emission = max(color_of(g.emissiveFactor, Color{0.0f}), Color{0.0f});
    texture(g.emissiveTexture.index, g.emissiveTexture.texCoord, g.emissiveTexture.extensions, m.emission_map);
    m.emission *= std::max(0.0f, number(g.extensions, "KHR_materials_emissive_strength", "emissiveStrength", 1.0f));
    m.two_sided = g.doubleSided;
    read_alpha(g, m);
    float transmission = number(g.extensions, "KHR_materials_transmission", "transmissionFactor", 0.0f);
    if (transmission > 0.5f) {
      m.kind = MaterialKind::glass;
      float ior = number(g.extensions, "KHR_materials_ior", "ior", 1.5f);
      m.ior = ior > 1.0f && ior <= 4.0f ? ior : 1.5f;
    }
    return m;
  }

 private:
  void read_alpha(const tinygltf::Material& g, MaterialDesc& m) {
    if (g.alphaMode == "MASK") m.alpha_mode = AlphaMode::mask;
    else if (g.alphaMode == "BLEND") m.alpha_mode = AlphaMode::blend;
    m.alpha_cutoff = std::clamp(finite_or(g.alphaCutoff, 0.5f), 0.0f, 1.0f);
    if (m.alpha_mode != AlphaMode::opaque && m.albedo.valid()) {
      m.opacity_map = m.albedo;
      m.opacity_channel = 3;
    }
    if (m.alpha_mode != AlphaMode::opaque && !m.opacity_map.valid() && m.alpha >= 1.0f) m.alpha_mode = AlphaMode::opaque;
  }

  static float number(const tinygltf::ExtensionMap& ext, const char* name, const char* key, float fallback) {
    auto it = ext.find(name);
    if (it == ext.end() || !it->second.IsObject() || !it->second.Has(key)) return fallback;
    const tinygltf::Value& v = it->second.Get(key);
    return v.IsNumber() ? finite_or(v.GetNumberAsDouble(), fallback) : fallback;
  }

  // A textureInfo: texture index, texCoord, and KHR_texture_transform (which may override it).
  void texture(int index, int tex_coord, const tinygltf::ExtensionMap& ext, TextureRef& ref) {
    if (index < 0) return;
    if (index >= static_cast<int>(m_model.textures.size())) {
      throw GltfError("a material refers to texture " + std::to_string(index) + ", which does not exist");
    }
    ref.texture = slot(index);
    ref.uv_set = tex_coord == 1 ? 1 : 0;
    auto it = ext.find("KHR_texture_transform");
    if (it == ext.end() || !it->second.IsObject()) return;
    const tinygltf::Value& t = it->second;
    auto vec2 = [&](const char* key, float x, float y) -> Vec2 {
      if (!t.Has(key) || !t.Get(key).IsArray() || t.Get(key).ArrayLen() != 2) return {x, y};
      const tinygltf::Value& a = t.Get(key);
      return {a.Get(0).IsNumber() ? finite_or(a.Get(0).GetNumberAsDouble(), x) : x,
              a.Get(1).IsNumber() ? finite_or(a.Get(1).GetNumberAsDouble(), y) : y};
    };
    Vec2 offset = vec2("offset", 0, 0), scale = vec2("scale", 1, 1);
    float rotation = t.Has("rotation") && t.Get("rotation").IsNumber()
                         ? finite_or(t.Get("rotation").GetNumberAsDouble(), 0.0f)
                         : 0.0f;
    if (t.Has("texCoord") && t.Get("texCoord").IsInt()) ref.uv_set = t.Get("texCoord").GetNumberAsInt() == 1 ? 1 : 0;
    // The extension's matrix: translation * rotation * scale, rotation counter-clockwise in uv.
    float c = std::cos(rotation), s = std::sin(rotation);
    ref.transform.m[0][0] = c * scale.x;
    ref.transform.m[0][1] = s * scale.y;
    ref.transform.m[0][2] = offset.x;
    ref.transform.m[1][0] = -s * scale.x;
    ref.transform.m[1][1] = c * scale.y;
    ref.transform.m[1][2] = offset.y;
    ref.transform.is_identity = offset.x == 0 && offset.y == 0 && scale.x == 1 && scale.y == 1 && rotation == 0;
  }

  // The file-local texture list entry for glTF texture `index` (created on first use).
  int slot(int index) {
    if (m_texture_slot[index] >= 0) return m_texture_slot[index];
    const tinygltf::Texture& t = m_model.textures[index];
    if (t.source < 0 || t.source >= static_cast<int>(m_model.images.size())) {
      throw GltfError("texture " + std::to_string(index) + " has no valid image source");
    }
    const tinygltf::Image& img = m_model.images[t.source];
    TextureDesc d;
    d.name = img.name.empty() ? "image " + std::to_string(t.source) : img.name;
    d.kind = TextureKind::image;
    d.loc = {m_doc.path, 0, 0};
    bool embedded = img.uri.empty() || img.uri.rfind("data:", 0) == 0;
    if (embedded) {
      d.path = extract_embedded(img, t.source);
    } else {
      d.path = resolve_gltf_uri(m_doc.dir, img.uri);
      if (!fs::is_regular_file(d.path)) {
        throw GltfError("image " + std::to_string(t.source) + " '" + img.uri + "' not found (looked for " + d.path + ")");
      }
    }
    if (t.sampler >= 0 && t.sampler < static_cast<int>(m_model.samplers.size())) {
      d.wrap_s = wrap_of(m_model.samplers[t.sampler].wrapS);
      d.wrap_t = wrap_of(m_model.samplers[t.sampler].wrapT);
    }
    m_textures.push_back(std::move(d));
    m_texture_slot[index] = static_cast<int>(m_textures.size() - 1);
    return m_texture_slot[index];
  }

  const GltfDocument& m_doc;
  const tinygltf::Model& m_model;
  std::vector<TextureDesc>& m_textures;
  std::vector<int> m_texture_slot;
};

}  // namespace

std::string embedded_image_dir() {
  if (const char* cache = std::getenv("FARM_CACHE"); cache && *cache) return (fs::path(cache) / "gltf-images").string();
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / ("farm-gltf-images-" + std::to_string(::getuid()))).string();
}

std::vector<MaterialDesc> gltf_materials(const GltfDocument& doc, std::vector<TextureDesc>& textures) {
  MaterialReader reader(doc, textures);
  std::vector<MaterialDesc> out;
  for (size_t i = 0; i < doc.model->materials.size(); ++i) out.push_back(reader.read(doc.model->materials[i], static_cast<int>(i)));
  // Primitives without a material. The spec's default is a white rough metal; Blender (and
  // users) show such objects as light grey, which is what our other formats do too.
  out.push_back(default_mesh_material());
  return out;
}

LoadedMeshFile load_gltf(const std::string& path) {
  GltfDocument doc = read_gltf_document(path, {});  // the scene's parse checked where its files lie
  LoadedMeshFile out;
  out.materials = gltf_materials(doc, out.textures);
  std::vector<GltfNodeInstance> nodes = gltf_scene_nodes(*doc.model);
  out.mesh = gltf_triangles(*doc.model, nodes, static_cast<uint32_t>(out.materials.size() - 1));
  return out;
}

}  // namespace rt
