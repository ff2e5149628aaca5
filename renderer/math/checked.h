// Overflow-checked size arithmetic for numbers that come from files or the network and then
// index memory. A plain `offset + length <= size` check passes when the sum wraps past 2^64
// (a glTF accessor with byteOffset 2^64 - 16 read 16 bytes before its buffer: issue 26), so
// every such check goes through these.
#pragma once

#include <cstdint>
#include <optional>

namespace rt {

// a + b, or nothing when it does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

// a * b, or nothing when it does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

// True when the bytes [offset, offset + length) lie inside a region of `size` bytes.
constexpr bool range_fits(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

}  // namespace rt
