// The glTF document's whole-number fields, checked on the JSON itself before tinygltf reads it.
//
// Why: tinygltf stores indices (mesh, material, accessor, node, ...) in an `int` and narrows
// any JSON integer to it, so "indices": 4294967297 became index 1 and a sparse count of 2^32
// became 0; a negative byteOffset or a fractional index is skipped as if absent. All of these
// break the glTF 2.0 schema; each is refused here with the field's place in the document.
#pragma once

#include <string_view>

namespace rt {

// The JSON text of a .gltf, or of a .glb's first chunk. Throws GltfError naming the first
// field that is not a whole number in its range, e.g.
//   "meshes[0].primitives[0].indices is 4294967297: an index must be a whole number from 0 to 2147483647".
// Text that is not JSON is left for tinygltf to report.
void check_gltf_integers(std::string_view json_text);

// The JSON chunk of GLB bytes (empty if the container is malformed: tinygltf reports that).
std::string_view glb_json_chunk(std::string_view glb);

}  // namespace rt
