// Writes small glTF 2.0 and OBJ+MTL scenes for tests: a unit quad facing +Z with a texture,
// its buffer in a .bin beside it, textures as PNG files written here (OpenImageIO), so tests
// own every byte they render and need no third-party data.
#pragma once

#include <OpenImageIO/imageio.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gltf_fixture {

namespace fs = std::filesystem;

// An 8-bit image; `rgba` holds width * height * channels bytes, rows top to bottom.
inline void write_png(const fs::path& path, int width, int height, int channels, const std::vector<uint8_t>& pixels) {
  fs::create_directories(path.parent_path());
  auto out = OIIO::ImageOutput::create(path.string());
  OIIO::ImageSpec spec(width, height, channels, OIIO::TypeDesc::UINT8);
  if (!out || !out->open(path.string(), spec) || !out->write_image(OIIO::TypeDesc::UINT8, pixels.data()) ||
      !out->close()) {
    throw std::runtime_error("cannot write test image " + path.string());
  }
}

// 2x2 texels: red, green (top row), blue, white (bottom row), opaque.
inline std::vector<uint8_t> four_colours() {
  return {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255};
}

// 4x4 texels in 2x2 blocks of the same four colours: bilinear lookups inside a block's
// central half are exact whatever the wrap mode.
inline std::vector<uint8_t> four_colour_blocks() {
  std::vector<uint8_t> small = four_colours(), out;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const uint8_t* p = &small[4 * ((y / 2) * 2 + x / 2)];
      out.insert(out.end(), p, p + 4);
    }
  return out;
}

template <typename T>
void append(std::vector<uint8_t>& bytes, const std::vector<T>& values) {
  size_t at = bytes.size();
  bytes.resize(at + values.size() * sizeof(T));
  std::memcpy(bytes.data() + at, values.data(), values.size() * sizeof(T));
}

struct QuadOptions {
  float z = 0;                  // the quad spans [-1, 1]^2 at this z, facing +Z
  std::string material_json;    // the glTF "materials" array (may refer to texture 0)
  std::string texture_uri = "tex.png";
  std::string sampler_json = R"({"wrapS": 33071, "wrapT": 33071})";  // CLAMP_TO_EDGE
  std::vector<std::string> extra_nodes;  // more nodes of the scene (JSON objects)
  std::string extensions_json;  // top-level "extensions" content, e.g. KHR_lights_punctual
  bool ortho_camera = true;     // camera at z = 5 looking down -Z covering exactly the quad
  bool second_quad = false;     // another quad at z = -1 with material 1 (seen through the first)
};

// Writes `name`.gltf and `name`.bin into `dir` and returns the .gltf path.
inline std::string write_quad(const fs::path& dir, const std::string& name, const QuadOptions& o) {
  std::vector<uint8_t> bin;
  auto quad = [&](float z) {
    append(bin, std::vector<float>{-1, -1, z, 1, -1, z, 1, 1, z, -1, 1, z});
  };
  quad(o.z);
  quad(-1.0f);
  append(bin, std::vector<float>{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1});
  append(bin, std::vector<float>{0, 1, 1, 1, 1, 0, 0, 0});  // glTF uv: (0, 0) = top-left of the image
  append(bin, std::vector<uint16_t>{0, 1, 2, 0, 2, 3});
  std::ofstream(dir / (name + ".bin"), std::ios::binary).write(reinterpret_cast<const char*>(bin.data()),
                                                              static_cast<std::streamsize>(bin.size()));
  std::string mesh2 = o.second_quad ? R"(,{"primitives": [{"attributes": {"POSITION": 1, "NORMAL": 2, "TEXCOORD_0": 3}, "indices": 4, "material": 1}]})" : "";
  std::vector<std::string> node_objects = {R"({"mesh": 0})"};
  if (o.second_quad) node_objects.push_back(R"({"mesh": 1})");
  if (o.ortho_camera) node_objects.push_back(R"({"camera": 0, "translation": [0, 0, 5]})");
  node_objects.insert(node_objects.end(), o.extra_nodes.begin(), o.extra_nodes.end());
  std::string nodes = "[", node_list = "[";
  for (size_t i = 0; i < node_objects.size(); ++i) {
    nodes += (i ? ", " : "") + node_objects[i];
    node_list += (i ? ", " : "") + std::to_string(i);
  }
  nodes += "]";
  node_list += "]";
  std::string json = R"({
  "asset": {"version": "2.0"},
  "scene": 0,
  "scenes": [{"nodes": )" + node_list + R"(}],
  "nodes": )" + nodes + R"(,
  "cameras": [{"type": "orthographic", "orthographic": {"xmag": 1, "ymag": 1, "znear": 0.1, "zfar": 100}}],
  "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 2, "TEXCOORD_0": 3}, "indices": 4, "material": 0}]})" + mesh2 + R"(],
  "materials": )" + o.material_json + R"(,
  "textures": [{"source": 0, "sampler": 0}],
  "samplers": [)" + o.sampler_json + R"(],
  "images": [{"uri": ")" + o.texture_uri + R"("}],
  "buffers": [{"uri": ")" + name + R"(.bin", "byteLength": 140}],
  "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48}, {"buffer": 0, "byteOffset": 48, "byteLength": 48},
                  {"buffer": 0, "byteOffset": 96, "byteLength": 48}, {"buffer": 0, "byteOffset": 144, "byteLength": 32},
                  {"buffer": 0, "byteOffset": 176, "byteLength": 12}],
  "accessors": [
    {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, )" + std::to_string(o.z) + R"(], "max": [1, 1, )" + std::to_string(o.z) + R"(]},
    {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC3", "min": [-1, -1, -1], "max": [1, 1, -1]},
    {"bufferView": 2, "componentType": 5126, "count": 4, "type": "VEC3"},
    {"bufferView": 3, "componentType": 5126, "count": 4, "type": "VEC2"},
    {"bufferView": 4, "componentType": 5123, "count": 6, "type": "SCALAR"}]
)" + (o.extensions_json.empty() ? "" : ",\n  \"extensions\": " + o.extensions_json) + "\n}\n";
  // The buffer is 188 bytes: two quads' positions, normals, uvs, indices.
  size_t at = json.find("\"byteLength\": 140");
  json.replace(at, 17, "\"byteLength\": " + std::to_string(bin.size()));
  std::ofstream(dir / (name + ".gltf")) << json;
  return (dir / (name + ".gltf")).string();
}

}  // namespace gltf_fixture
