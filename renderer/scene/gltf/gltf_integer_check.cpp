#include "scene/gltf/gltf_integer_check.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "scene/gltf/gltf_document.h"

namespace rt {

namespace {

using nlohmann::json;

constexpr uint64_t k_int_max = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());

// Fields tinygltf keeps in an int: indices into the document's arrays, and enums.
const std::set<std::string, std::less<>> k_int_fields = {
    "buffer",  "bufferView", "camera",   "componentType", "count",     "height",  "index",   "indices",
    "input",   "inverseBindMatrices",    "light",         "magFilter", "material", "mesh",   "minFilter",
    "mode",    "node",       "output",   "sampler",       "scene",     "skeleton", "skin",   "source",
    "target",  "texCoord",   "width",    "wrapR",         "wrapS",     "wrapT"};
// Fields kept in a size_t: any whole number from 0.
const std::set<std::string, std::less<>> k_size_fields = {"byteLength", "byteOffset", "byteStride"};
// Arrays of indices, and objects whose every member is an index.
const std::set<std::string, std::less<>> k_index_arrays = {"children", "joints", "nodes"};

struct Walker {
  static constexpr int k_max_depth = 32;

  void fail(const std::string& where, const json& value, const std::string& need) {
    throw GltfError(where + " is " + value.dump() + ": glTF needs " + need + " here");
  }

  // `in_extension`: inside "extensions", where other vendors' fields of these names may be
  // anything; only their numbers are checked.
  void whole(const std::string& where, const json& value, uint64_t max, bool required) {
    const std::string need = max == k_int_max ? "a whole number from 0 to 2147483647" : "a whole number from 0";
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > max) fail(where, value, need);
    } else if (value.is_number()) {
      fail(where, value, need);  // negative, or with a fraction or exponent
    } else if (required) {
      fail(where, value, need);
    }
  }

  void walk(const json& node, const std::string& where, bool in_extension, int depth) {
    // tinygltf reads these fields at most a few levels down; deeper nesting (extension data)
    // is not walked, so a hostile nesting depth cannot exhaust the stack here.
    if (depth > k_max_depth) return;
    if (node.is_array()) {
      for (size_t i = 0; i < node.size(); ++i) walk(node[i], where + "[" + std::to_string(i) + "]", in_extension, depth + 1);
      return;
    }
    if (!node.is_object()) return;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string& key = it.key();
      const json& value = it.value();
      const std::string at = where.empty() ? key : where + "." + key;
      if (key == "extras") continue;  // the application's own data: tinygltf keeps it as it is
      if (k_int_fields.count(key)) {
        // "target" is an object in an animation channel, a number in a bufferView.
        whole(at, value, k_int_max, !in_extension && key != "target");
      } else if (k_size_fields.count(key)) {
        whole(at, value, std::numeric_limits<uint64_t>::max(), !in_extension);
      } else if (k_index_arrays.count(key) && value.is_array() && !where.empty()) {  // top-level "nodes": the nodes
        for (size_t i = 0; i < value.size(); ++i) {
          whole(at + "[" + std::to_string(i) + "]", value[i], k_int_max, !in_extension);
        }
        continue;
      } else if (key == "attributes" && value.is_object()) {
        for (auto a = value.begin(); a != value.end(); ++a) whole(at + "." + a.key(), a.value(), k_int_max, !in_extension);
        continue;
      }
      walk(value, at, in_extension || key == "extensions", depth + 1);
    }
  }
};

uint32_t le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // GLB is little-endian, and so is every machine this builds for
}

}  // namespace

std::string_view glb_json_chunk(std::string_view glb) {
  if (glb.size() < 20) return {};
  const uint64_t length = le32(glb.data() + 12);
  if (le32(glb.data() + 16) != 0x4E4F534Au || length > glb.size() - 20) return {};  // "JSON"
  return glb.substr(20, length);
}

void check_gltf_integers(std::string_view json_text) {
  json doc = json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (doc.is_discarded()) return;
  Walker walker;
  walker.walk(doc, "", false, 0);
  // Morph targets: an array of objects whose members are accessor indices.
  if (!doc.is_object() || !doc.contains("meshes") || !doc["meshes"].is_array()) return;
  const json& meshes = doc["meshes"];
  for (size_t m = 0; m < meshes.size(); ++m) {
    const json& prims = meshes[m].is_object() && meshes[m].contains("primitives") ? meshes[m]["primitives"] : json();
    for (size_t p = 0; prims.is_array() && p < prims.size(); ++p) {
      const json& targets = prims[p].is_object() && prims[p].contains("targets") ? prims[p]["targets"] : json();
      for (size_t t = 0; targets.is_array() && t < targets.size(); ++t) {
        if (!targets[t].is_object()) continue;
        for (auto a = targets[t].begin(); a != targets[t].end(); ++a) {
          walker.whole("meshes[" + std::to_string(m) + "].primitives[" + std::to_string(p) + "].targets[" +
                           std::to_string(t) + "]." + a.key(),
                       a.value(), k_int_max, true);
        }
      }
    }
  }
}

}  // namespace rt
