// Content addresses of shipped files: BLAKE2b-256 (libsodium), as 64 hex digits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace farm {

std::string content_hash(const uint8_t* data, size_t size);
std::string content_hash(const std::vector<uint8_t>& data);
bool is_content_hash(const std::string& s);  // 64 lowercase hex digits
// The content hash of what is left to read from the open file `fd`, read in pieces (no copy of
// the file in memory); empty optional if a read fails.
std::optional<std::string> content_hash_of_file(int fd);

// Whole file into memory; empty optional if it cannot be read.
std::optional<std::vector<uint8_t>> read_file_bytes(const std::string& path, size_t max_bytes = size_t{1} << 31);

}  // namespace farm
