// Cost map files: read() must reject bad files with std::invalid_argument (the user's file, exit 2;
// docs/architecture.md, Errors) or std::runtime_error (I/O); a map it accepts must
// answer cost() for any block inside it and scale without crashing.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "costs/cost_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/fuzz_cost_map_" + std::to_string(::getpid()) + ".txt";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    farm::CostMap m = farm::CostMap::read(path);
    farm::Block b;
    b.frame = m.frames();
    b.width = m.width() / 2 + 1;
    b.height = m.height() / 2 + 1;
    (void)m.cost(b);
    if (static_cast<long long>(m.columns()) * m.rows() < 100000) (void)m.scaled(64, 48, 2.0, 4);
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
  return 0;
}
