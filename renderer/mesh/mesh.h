// Triangle meshes in memory: what mesh files and procedural shapes become before Embree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "math/vec.h"
#include "scene/scene_desc.h"

namespace rt {

struct TriangleMesh {
  std::vector<Vec3> positions;
  std::vector<Vec3> normals;    // empty, or one per position (smooth shading)
  std::vector<Vec2> uvs;        // empty, or one per position (v = 0 at the image's bottom)
  std::vector<Vec2> uvs1;       // second uv set (glTF TEXCOORD_1): empty, or one per position
  std::vector<Color> colors;    // vertex colours (glTF COLOR_0, PLY): empty, or one per position
  std::vector<uint32_t> indices;        // 3 per triangle
  std::vector<uint32_t> face_materials; // empty (all use `material`), or one per triangle:
                                        // index into the materials list of the owning load
  int material = -1;                    // used when face_materials is empty
  size_t triangle_count() const { return indices.size() / 3; }
};

// A mesh file's content: its triangles (all sub-meshes merged, node transforms applied)
// and the materials the file itself defines (MTL, glTF...), converted to ours.
struct LoadedMeshFile {
  TriangleMesh mesh;                   // face_materials index into `materials`
  std::vector<MaterialDesc> materials; // at least one (a default grey diffuse if the file has none)
  std::vector<TextureDesc> textures;   // images the materials' TextureRefs index (file-local)
};

// Loads OBJ/PLY/FBX through assimp and glTF/GLB through the glTF loader. Throws SceneError naming the file
// (and `where`, the scene location that referenced it) on unreadable, empty or malformed files.
LoadedMeshFile load_mesh_file(const std::string& path, const SourceLoc& where);

}  // namespace rt
