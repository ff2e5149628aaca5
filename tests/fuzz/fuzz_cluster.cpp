// Cluster files of `farm sim` / `farm plan`: errors only, and expanding a parsed cluster with
// a bounded worker count is safe.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "scene/scene_desc.h"
#include "sim/cluster_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    farm::ClusterSpec spec = farm::parse_cluster_spec(text, "fuzz.toml");
    if (spec.total_workers() <= 10000) farm::expand_cluster(spec, 1);
  } catch (const rt::SceneError&) {
  }
  return 0;
}
