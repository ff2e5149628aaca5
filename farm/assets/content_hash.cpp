#include "assets/content_hash.h"

#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace farm {

namespace {

std::string hex_of(const unsigned char (&digest)[32]) {
  static const char* hex = "0123456789abcdef";
  std::string out(64, '0');
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = hex[digest[i] >> 4];
    out[2 * i + 1] = hex[digest[i] & 15];
  }
  return out;
}

}  // namespace

std::string content_hash(const uint8_t* data, size_t size) {
  unsigned char digest[32];
  crypto_generichash(digest, sizeof digest, data, size, nullptr, 0);
  return hex_of(digest);
}

std::optional<std::string> content_hash_of_file(int fd) {
  // The same BLAKE2b-256 as content_hash(): the streaming API gives the one-shot digest.
  crypto_generichash_state state;
  unsigned char digest[32];
  crypto_generichash_init(&state, nullptr, 0, sizeof digest);
  std::vector<unsigned char> piece(size_t{1} << 20);
  for (;;) {
    const ssize_t n = ::read(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    crypto_generichash_update(&state, piece.data(), static_cast<unsigned long long>(n));
  }
  crypto_generichash_final(&state, digest, sizeof digest);
  return hex_of(digest);
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
