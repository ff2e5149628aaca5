#include "base/memory.h"

#include <cstdio>

namespace farm {

std::string memory_size_text(uint64_t bytes) {
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
  return text;
}

void throw_out_of_memory(const std::string& what, uint64_t bytes, const std::string& kind) {
  throw OutOfMemory("not enough memory for " + what + " (" + memory_size_text(bytes) + (kind.empty() ? "" : " of " + kind) +
                    ")");
}

std::string image_size_text(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

std::string error_text(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return std::string("not enough memory (an allocation failed: ") + e.what() + ")";
  return e.what();
}

}  // namespace farm
