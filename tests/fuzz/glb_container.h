// The GLB container (glTF 2.0 binary): a 12-byte header, a JSON chunk, an optional BIN chunk.
// fuzz_gltf splits an input into its chunks, mutates one, and writes the container back with
// consistent lengths, so mutations reach the accessors instead of the header checks.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace fuzz_glb {

constexpr uint32_t k_json_chunk = 0x4E4F534A;  // "JSON"
constexpr uint32_t k_bin_chunk = 0x004E4942;   // "BIN\0"

struct Glb {
  std::string json;
  std::vector<uint8_t> bin;
  bool has_bin = false;
};

inline uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The chunks of a well-formed GLB, or nothing.
inline std::optional<Glb> split(const uint8_t* data, size_t size) {
  if (size < 20 || std::memcmp(data, "glTF", 4) != 0) return std::nullopt;
  const uint64_t json_len = read_u32(data + 12);
  if (read_u32(data + 16) != k_json_chunk || 20 + json_len > size) return std::nullopt;
  Glb g;
  g.json.assign(reinterpret_cast<const char*>(data + 20), json_len);
  const uint64_t at = 20 + json_len;
  if (at + 8 <= size && read_u32(data + at + 4) == k_bin_chunk) {
    const uint64_t bin_len = read_u32(data + at);
    if (at + 8 + bin_len > size) return std::nullopt;
    g.bin.assign(data + at + 8, data + at + 8 + bin_len);
    g.has_bin = true;
  }
  return g;
}

inline void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

// The container with both chunks padded to 4 bytes (spaces for JSON, zeros for BIN).
inline std::vector<uint8_t> join(const Glb& g) {
  std::string json = g.json;
  while (json.size() % 4) json += ' ';
  std::vector<uint8_t> bin = g.bin;
  while (bin.size() % 4) bin.push_back(0);
  std::vector<uint8_t> out = {'g', 'l', 'T', 'F'};
  put_u32(out, 2);
  put_u32(out, static_cast<uint32_t>(12 + 8 + json.size() + (g.has_bin ? 8 + bin.size() : 0)));
  put_u32(out, static_cast<uint32_t>(json.size()));
  put_u32(out, k_json_chunk);
  out.insert(out.end(), json.begin(), json.end());
  if (g.has_bin) {
    put_u32(out, static_cast<uint32_t>(bin.size()));
    put_u32(out, k_bin_chunk);
    out.insert(out.end(), bin.begin(), bin.end());
  }
  return out;
}

}  // namespace fuzz_glb
