#include "scene/gltf/gltf_accessors.h"

#include <tiny_gltf.h>

#include <cmath>
#include <cstring>

#include "math/checked.h"
#include "scene/gltf/gltf_document.h"

namespace rt {

namespace {

// Largest element count we accept in one accessor (also caps allocations before reading).
constexpr uint64_t k_max_elements = uint64_t{1} << 28;
// Largest count of an accessor without a bufferView (all zeros, or sparse substitutions only).
constexpr uint64_t k_max_zero_elements = uint64_t{1} << 22;

[[noreturn]] void fail(int accessor, const std::string& what) {
  throw GltfError("accessor " + std::to_string(accessor) + ": " + what);
}

const tinygltf::Accessor& accessor_at(const tinygltf::Model& m, int index) {
  if (index < 0 || index >= static_cast<int>(m.accessors.size())) {
    throw GltfError("accessor " + std::to_string(index) + " does not exist (the file has " +
                    std::to_string(m.accessors.size()) + ")");
  }
  return m.accessors[index];
}

int component_bytes(int type) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_INT:
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;
  }
}

int element_components(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    default: return 0;  // matrices are not vertex attributes or indices
  }
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double component(const unsigned char* p, int type, bool normalized) {
  switch (type) {
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return load<float>(p);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return normalized ? p[0] / 255.0 : p[0];
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      double v = static_cast<int8_t>(p[0]);
      return normalized ? std::max(v / 127.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      double v = load<uint16_t>(p);
      return normalized ? v / 65535.0 : v;
    }
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      double v = load<int16_t>(p);
      return normalized ? std::max(v / 32767.0, -1.0) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return load<uint32_t>(p);
    case TINYGLTF_COMPONENT_TYPE_INT: return load<int32_t>(p);
    default: return 0;
  }
}

// A checked window onto the bytes of `count` elements of `elem_bytes` each, `stride` apart.
struct ByteRange {
  const unsigned char* data = nullptr;
  size_t stride = 0;
};

ByteRange view_range(const tinygltf::Model& m, int accessor, int view_index, uint64_t offset, uint64_t count,
                     uint64_t elem_bytes, bool allow_stride) {
  if (view_index < 0 || view_index >= static_cast<int>(m.bufferViews.size())) {
    fail(accessor, "bufferView " + std::to_string(view_index) + " does not exist");
  }
  const tinygltf::BufferView& view = m.bufferViews[view_index];
  if (view.buffer < 0 || view.buffer >= static_cast<int>(m.buffers.size())) {
    fail(accessor, "buffer " + std::to_string(view.buffer) + " does not exist");
  }
  const tinygltf::Buffer& buffer = m.buffers[view.buffer];
  uint64_t stride = allow_stride && view.byteStride > 0 ? view.byteStride : elem_bytes;
  if (stride < elem_bytes || stride > 252) fail(accessor, "byteStride " + std::to_string(stride) + " is invalid");
  // Offsets come from the file and may be near 2^64: every sum is checked (math/checked.h).
  // count <= 2^28 and stride <= 252, so the span itself cannot overflow.
  const uint64_t span = count == 0 ? 0 : (count - 1) * stride + elem_bytes;
  if (!range_fits(offset, span, view.byteLength)) fail(accessor, "reads past the end of its bufferView");
  if (!range_fits(view.byteOffset, view.byteLength, buffer.data.size())) {
    fail(accessor, "its bufferView runs past the end of buffer " + std::to_string(view.buffer) + " (" +
                       std::to_string(buffer.data.size()) + " bytes loaded)");
  }
  return {buffer.data.data() + view.byteOffset + offset, static_cast<size_t>(stride)};
}

// All components of the accessor as doubles, `n` per element, sparse substitutions applied.
std::vector<double> read_components(const tinygltf::Model& m, int index, int& n) {
  const tinygltf::Accessor& a = accessor_at(m, index);
  n = element_components(a.type);
  int cbytes = component_bytes(a.componentType);
  if (n == 0) fail(index, "element type is not SCALAR or VEC2..4");
  if (cbytes == 0) fail(index, "component type " + std::to_string(a.componentType) + " is invalid");
  if (a.count > k_max_elements) fail(index, "count " + std::to_string(a.count) + " is larger than 2^28");
  // Allocated only once the count is known to be backed by data: a few bytes of JSON could
  // otherwise ask for 2^28 x 4 doubles (8 GiB) before the bounds check refused them (found
  // by the structure-aware fuzz_gltf). Without a bufferView the elements are zeros (spec),
  // which no real file needs by the hundred million.
  const uint64_t elem_bytes = static_cast<uint64_t>(cbytes) * n;
  ByteRange r;
  if (a.bufferView >= 0) {
    r = view_range(m, index, a.bufferView, a.byteOffset, a.count, elem_bytes, true);
  } else if (a.count > k_max_zero_elements) {
    fail(index, "count " + std::to_string(a.count) + " without a bufferView is larger than 2^22");
  }
  std::vector<double> out(a.count * static_cast<size_t>(n), 0.0);
  if (a.bufferView >= 0) {
    for (size_t i = 0; i < a.count; ++i)
      for (int c = 0; c < n; ++c) out[i * n + c] = component(r.data + i * r.stride + c * cbytes, a.componentType, a.normalized);
  }
  if (a.sparse.isSparse) {
    const auto& sp = a.sparse;
    if (sp.count < 0 || static_cast<uint64_t>(sp.count) > a.count) fail(index, "sparse count is invalid");
    int icbytes = component_bytes(sp.indices.componentType);
    if (icbytes == 0 || sp.indices.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT) fail(index, "sparse index type is invalid");
    ByteRange ir = view_range(m, index, sp.indices.bufferView, sp.indices.byteOffset, sp.count, icbytes, false);
    ByteRange vr = view_range(m, index, sp.values.bufferView, sp.values.byteOffset, sp.count, elem_bytes, false);
    for (int k = 0; k < sp.count; ++k) {
      double target = component(ir.data + k * ir.stride, sp.indices.componentType, false);
      if (!(target >= 0 && target < static_cast<double>(a.count))) fail(index, "sparse index out of range");
      auto t = static_cast<size_t>(target);
      for (int c = 0; c < n; ++c) out[t * n + c] = component(vr.data + k * vr.stride + c * cbytes, a.componentType, a.normalized);
    }
  }
  return out;
}

}  // namespace

size_t gltf_accessor_count(const tinygltf::Model& model, int accessor) { return accessor_at(model, accessor).count; }

std::vector<float> read_gltf_floats(const tinygltf::Model& model, int accessor, int components) {
  int n = 0;
  std::vector<double> raw = read_components(model, accessor, n);
  bool vec3_as_4 = n == 3 && components == 4;
  if (n != components && !vec3_as_4) {
    fail(accessor, "has " + std::to_string(n) + " components per element, expected " + std::to_string(components));
  }
  size_t count = n ? raw.size() / n : 0;
  std::vector<float> out(count * components);
  for (size_t i = 0; i < count; ++i) {
    for (int c = 0; c < components; ++c) {
      double v = c < n ? raw[i * n + c] : 1.0;
      out[i * components + c] = std::isfinite(v) ? static_cast<float>(v) : 0.0f;
    }
  }
  return out;
}

std::vector<uint32_t> read_gltf_indices(const tinygltf::Model& model, int accessor) {
  const tinygltf::Accessor& a = accessor_at(model, accessor);
  if (a.type != TINYGLTF_TYPE_SCALAR) fail(accessor, "indices must be SCALAR");
  if (a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE &&
      a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT &&
      a.componentType != TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT) {
    fail(accessor, "indices must be unsigned bytes, shorts or ints");
  }
  int n = 0;
  std::vector<double> raw = read_components(model, accessor, n);
  std::vector<uint32_t> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<uint32_t>(raw[i]);
  return out;
}

}  // namespace rt
