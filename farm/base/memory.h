// Large buffers (a whole frame, the image being assembled) allocated with a failure that says
// what they were for and how much they needed: a bare std::bad_alloc says neither, and one that
// escapes main aborts the process (docs/failures.md, "not enough memory").
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace farm {

// A runtime failure (exit 1), never bad input: the same command may run on a larger machine.
class OutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "4.0 GiB", "768.0 MiB", "12.0 KiB", "100 bytes".
std::string memory_size_text(uint64_t bytes);

// Throws OutOfMemory: "not enough memory for WHAT (SIZE of KIND)", e.g. "not enough memory for
// the 16384x16384 frame (4.0 GiB of float RGBA)".
[[noreturn]] void throw_out_of_memory(const std::string& what, uint64_t bytes, const std::string& kind);

// "16384x16384".
std::string image_size_text(int width, int height);

// `count` copies of `value` into `v`, or OutOfMemory naming `what` and `kind` (as above).
template <class T>
void allocate_filled(std::vector<T>& v, size_t count, const T& value, const std::string& what, const std::string& kind) {
  try {
    v.assign(count, value);
  } catch (const std::bad_alloc&) {
    throw_out_of_memory(what, static_cast<uint64_t>(count) * sizeof(T), kind);
  } catch (const std::length_error&) {
    throw_out_of_memory(what, static_cast<uint64_t>(count) * sizeof(T), kind);
  }
}

// e.what(), except for an allocation failure that names nothing: "not enough memory (an
// allocation failed: std::bad_alloc)".
std::string error_text(const std::exception& e);

}  // namespace farm
