// Reading glTF accessors into plain arrays with every bound checked: the accessor's view and
// buffer exist, offset + (count - 1) * stride + element size lies inside both, the component
// type and element type are ones the attribute allows. Normalised integer components are
// scaled to [0, 1] (unsigned) or [-1, 1] (signed) as the spec says. Sparse accessors are
// applied. Throws GltfError naming the accessor.
#pragma once

#include <cstdint>
#include <vector>

#include "math/vec.h"

namespace tinygltf {
class Model;
}

namespace rt {

// `components`: how many floats per element the caller wants (2, 3 or 4); the accessor's
// element type must have exactly that many, except that a VEC3 may be read as 4 (w = 1).
std::vector<float> read_gltf_floats(const tinygltf::Model& model, int accessor, int components);
std::vector<uint32_t> read_gltf_indices(const tinygltf::Model& model, int accessor);
size_t gltf_accessor_count(const tinygltf::Model& model, int accessor);

}  // namespace rt
