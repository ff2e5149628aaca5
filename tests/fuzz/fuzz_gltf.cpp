// glTF 2.0 files through our loader (tinygltf, then our accessor, node, material and camera
// code): input starting with the GLB magic "glTF" is written as .glb, anything else as .gltf.
// Both the scene-file reader and the mesh loader run. Bad files give SceneError/GltfError;
// nothing may crash, hang or allocate without bound. Embedded images are extracted into a
// per-process folder that is emptied after every input.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "scene/mesh.h"
#include "scene/scene_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string cache = "/tmp/fuzz_gltf_cache_" + std::to_string(::getpid());
  static const bool cache_set = ::setenv("FARM_CACHE", cache.c_str(), 1) == 0;
  (void)cache_set;
  const bool binary = size >= 4 && std::memcmp(data, "glTF", 4) == 0;
  const std::string path = "/tmp/fuzz_gltf_" + std::to_string(::getpid()) + (binary ? ".glb" : ".gltf");
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
