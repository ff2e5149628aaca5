// Mesh files through the format check and assimp: the first byte picks the file extension, the
// rest is the file. Bad files give SceneError; nothing may crash, hang or allocate without bound.
#include <stdlib.h>
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
  // A private empty folder: a glTF's buffer or an OBJ's mtllib names files beside the mesh,
  // which must not be whatever else lies in /tmp (the run would depend on the machine).
  static const std::string dir = [] {
    char templ[] = "/tmp/fuzz_mesh_XXXXXX";
    const char* made = ::mkdtemp(templ);
    return std::string(made ? made : "/tmp");
  }();
  const std::string path = dir + "/mesh" + extensions[data[0] % 6];
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
