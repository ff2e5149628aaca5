// The first line of defence of the mesh loader: before assimp sees a file, check that it is a
// regular file of bounded size whose content really is the format its extension claims, and
// that the headers assimp trusts (PLY element counts, GLB chunk lengths, glTF image types)
// cannot make it loop, over-allocate or crash.
#pragma once

#include <cstdint>
#include <string>

namespace rt {

enum class MeshFormat { obj, ply, gltf, glb, fbx };

// Neither a mesh file nor anything it references may be larger than this.
constexpr uint64_t k_max_mesh_file_bytes = uint64_t{2} << 30;

// Returns the format to import, or throws std::runtime_error with the reason only (the caller
// adds the path and the scene location).
MeshFormat check_mesh_file(const std::string& path);

// The file's extension, lower-cased, with its dot (".ply").
std::string lower_extension(const std::string& path);

}  // namespace rt
