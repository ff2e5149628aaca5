#include "assets/content_hash.h"

#include <sodium.h>

#include <fstream>

namespace farm {

std::string content_hash(const uint8_t* data, size_t size) {
  unsigned char digest[32];
  crypto_generichash(digest, sizeof digest, data, size, nullptr, 0);
  static const char* hex = "0123456789abcdef";
  std::string out(64, '0');
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = hex[digest[i] >> 4];
    out[2 * i + 1] = hex[digest[i] & 15];
  }
  return out;
}

std::string content_hash(const std::vector<uint8_t>& data) { return content_hash(data.data(), data.size()); }

bool is_content_hash(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::optional<std::vector<uint8_t>> read_file_bytes(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > max_bytes) return std::nullopt;
  std::vector<uint8_t> data(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(data.data()), size)) return std::nullopt;
  return data;
}

}  // namespace farm
