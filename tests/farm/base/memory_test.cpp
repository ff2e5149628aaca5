// Large buffers allocated with a failure that names what and how much (base/memory.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "base/memory.h"
#include "under_asan.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

TEST_CASE("memory: sizes are written in binary units with one decimal") {
  CHECK(memory_size_text(100) == "100 bytes");
  CHECK(memory_size_text(12 * 1024) == "12.0 KiB");
  CHECK(memory_size_text(768ull << 20) == "768.0 MiB");
  CHECK(memory_size_text(16384ull * 16384 * 16) == "4.0 GiB");
  CHECK(memory_size_text(3ull << 40) == "3.0 TiB");
}

TEST_CASE("memory: a buffer longer than a vector may be is OutOfMemory naming what and how much, never std::length_error") {
  std::vector<float> v;
  const size_t too_many = v.max_size() + 1;
  CHECK_THROWS_WITH_AS(allocate_filled(v, too_many, 0.0f, "the 16384x16384 frame", "float RGBA"),
                       doctest::Contains("not enough memory for the 16384x16384 frame ("), OutOfMemory);
  std::vector<uint8_t> small;
  allocate_filled(small, 10, uint8_t{7}, "x", "bytes");
  CHECK(small == std::vector<uint8_t>(10, 7));
  CHECK(image_size_text(16384, 8) == "16384x8");
}

TEST_CASE("memory: a buffer that cannot be had is OutOfMemory naming what and how much, never std::bad_alloc") {
  if (FARM_UNDER_ASAN) {
    MESSAGE("skipped: under AddressSanitizer an allocation too large to have ends the process instead of throwing std::bad_alloc");
    return;
  }
  std::vector<float> v;
  const size_t too_many = v.max_size() / 2;  // 2 EiB: no machine has it, and the vector allows it
  CHECK_THROWS_WITH_AS(allocate_filled(v, too_many, 0.0f, "the 16384x16384 frame", "float RGBA"),
                       doctest::Contains("not enough memory for the 16384x16384 frame ("), OutOfMemory);
}

TEST_CASE("memory: error_text names an allocation failure, and passes other messages on") {
  CHECK(error_text(std::bad_alloc()) == "not enough memory (an allocation failed: std::bad_alloc)");
  CHECK(error_text(std::runtime_error("disk full")) == "disk full");
}

TEST_SUITE_END();
