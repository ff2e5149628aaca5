// glTF 2.0 files through our loader (tinygltf, then our accessor, node, material and camera
// code): input starting with the GLB magic "glTF" is written as .glb, anything else as .gltf.
// Both the scene-file reader and the mesh loader run. Bad files give SceneError/GltfError;
// nothing may crash, hang or allocate without bound. Embedded images are extracted into a
// per-process folder that is emptied after every input.
//
// Structure-aware (issue 26): a custom mutator keeps most inputs valid JSON / valid GLB and
// changes their numbers, counts, offsets, strides, indices and types (json_mutator.h), or the
// GLB's binary chunk, so the fuzzer reaches the accessor arithmetic; one mutation in ten is
// libFuzzer's own byte-level one, for the parsers.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "glb_container.h"
#include "json_mutator.h"
#include "mesh/mesh.h"
#include "scene/scene_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string cache = "/tmp/fuzz_gltf_cache_" + std::to_string(::getpid());
  static const bool cache_set = ::setenv("FARM_CACHE", cache.c_str(), 1) == 0;
  (void)cache_set;
  const bool binary = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  // A private empty folder: a buffer or image URI names files beside the glTF, which must not
  // be whatever else lies in /tmp (the run would depend on the machine).
  static const std::string dir = [] {
    char templ[] = "/tmp/fuzz_gltf_XXXXXX";
    const char* made = ::mkdtemp(templ);
    return std::string(made ? made : "/tmp");
  }();
  const std::string path = dir + (binary ? "/scene.glb" : "/scene.gltf");
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    rt::SceneDesc desc = rt::parse_scene_file(path);
    for (size_t i = 0; i < desc.cameras.size() && i < 4; ++i) rt::use_camera(desc, std::to_string(i));
  } catch (const std::runtime_error&) {
  }
  try {
    rt::load_mesh_file(path, rt::SourceLoc{"fuzz.toml", 1, 1});
  } catch (const std::runtime_error&) {
  }
  std::remove(path.c_str());
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// One structure-aware step on `glb` or `text`; false when there was nothing to change.
bool mutate_once(std::optional<fuzz_glb::Glb>& glb, std::string& text, std::mt19937_64& rng) {
  if (!glb) return fuzz_json::mutate_json(text, rng);
  if (rng() % 4 == 0 && glb->has_bin && !glb->bin.empty()) {  // the buffer's bytes: indices, floats
    const size_t size = glb->bin.size();
    glb->bin.resize(size * 2);
    glb->bin.resize(LLVMFuzzerMutate(glb->bin.data(), size, glb->bin.size()));
    return true;
  }
  return fuzz_json::mutate_json(glb->json, rng);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  // FUZZ_GLTF_BYTES_ONLY=1: libFuzzer's byte mutations only, the fuzzer as it was before this
  // mutator (for results/fuzz.md's time-to-find comparison).
  static const bool bytes_only = std::getenv("FUZZ_GLTF_BYTES_ONLY") != nullptr;
  std::mt19937_64 rng(seed);
  if (bytes_only || rng() % 10 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::optional<fuzz_glb::Glb> glb = fuzz_glb::split(data, size);
  std::string text(reinterpret_cast<const char*>(data), size);
  bool changed = false;
  for (uint64_t steps = 1 + rng() % 3; steps > 0; --steps) changed |= mutate_once(glb, text, rng);
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<uint8_t> out = glb ? fuzz_glb::join(*glb) : std::vector<uint8_t>(text.begin(), text.end());
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
