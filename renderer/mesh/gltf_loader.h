// glTF 2.0 files as meshes (a scene file's `mesh` object, or a whole glTF scene file): the
// default scene's triangles with the file's materials and textures.
#pragma once

#include <string>
#include <vector>

#include "scene/gltf/gltf_document.h"
#include "mesh/mesh.h"

namespace rt {

// Geometry, materials and textures; throws GltfError with the reason only.
LoadedMeshFile load_gltf(const std::string& path);

// The pieces, for the scene-file reader and the tests.
TriangleMesh gltf_triangles(const tinygltf::Model& model, const std::vector<GltfNodeInstance>& nodes,
                            uint32_t default_material);
// One MaterialDesc per glTF material plus, last, the default for primitives without one;
// `textures` receives the images they use (embedded ones extracted to files, see below).
std::vector<MaterialDesc> gltf_materials(const GltfDocument& doc, std::vector<TextureDesc>& textures);

// Where embedded (data: URI or GLB bufferView) images are written so that OpenImageIO can
// read them by name: $FARM_CACHE/gltf-images, else the system temp folder; files are named
// by a hash of their content, so every process extracting the same image writes the same file.
std::string embedded_image_dir();

}  // namespace rt
