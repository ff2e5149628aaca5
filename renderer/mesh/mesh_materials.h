// Assimp material -> MaterialDesc. Internal to the mesh loader (mesh_loader.cpp); kept apart so
// the heuristics (MTL illum/Ks/Ns, glTF metallic-roughness) can be read and tuned on their own.
#pragma once

#include "scene/scene_desc.h"

struct aiMaterial;

namespace rt {

// What a mesh gets when its file defines no material: grey (0.8) diffuse named "default".
MaterialDesc default_mesh_material();

// Converts one assimp material. Never throws for odd values: non-finite or out-of-range
// colours and factors are clamped or replaced by defaults.
MaterialDesc convert_assimp_material(const aiMaterial& material);

}  // namespace rt
