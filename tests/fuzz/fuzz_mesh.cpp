// Mesh files through the format check and assimp: the first byte picks the file extension, the
// rest is the file. Bad files give SceneError; nothing may crash, hang or allocate without bound.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "mesh/mesh.h"
#include "scene/scene_desc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* extensions[] = {".obj", ".ply", ".stl", ".gltf", ".glb", ".off"};
  const std::string path = "/tmp/fuzz_mesh_" + std::to_string(::getpid()) + extensions[data[0] % 6];
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  try {
    rt::load_mesh_file(path, rt::SourceLoc{"fuzz.toml", 1, 1});
  } catch (const rt::SceneError&) {
  } catch (const std::runtime_error&) {
  }
  std::remove(path.c_str());
  return 0;
}
