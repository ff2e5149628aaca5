// A .gltf/.glb file as a whole scene file (see read_gltf_scene).
#pragma once

#include <string>

#include "scene/gltf/gltf_document.h"
#include "scene/scene_desc.h"

namespace rt {

// The scene a glTF file describes: one mesh object (the default scene's geometry with the
// file's materials), the first camera (all of them in SceneDesc::cameras; a framing camera
// if there is none), its KHR_lights_punctual lights, and a uniform white environment if it
// has neither lights nor emissive materials. Render settings are the defaults (the image
// height follows the camera's aspect ratio). Throws GltfError with the reason only. `roots`:
// where its files may lie (read_gltf_document).
SceneDesc read_gltf_scene(const std::string& path, const std::vector<std::string>& roots);

}  // namespace rt
