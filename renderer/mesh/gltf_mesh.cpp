// Every triangle primitive of every mesh node of the default scene, in the file's world
// space, merged into one TriangleMesh (as assimp's PreTransformVertices did for us before).
#include <tiny_gltf.h>

#include <cmath>
#include <limits>

#include "scene/gltf/gltf_accessors.h"
#include "mesh/gltf_loader.h"

namespace rt {

namespace {

constexpr uint64_t k_max_triangles = uint64_t{1} << 28;

int attribute(const tinygltf::Primitive& p, const char* name) {
  auto it = p.attributes.find(name);
  return it == p.attributes.end() ? -1 : it->second;
}

// Triangle corner indices of a primitive of mode TRIANGLES, TRIANGLE_STRIP or TRIANGLE_FAN.
std::vector<uint32_t> triangle_corners(const std::vector<uint32_t>& idx, int mode) {
  std::vector<uint32_t> out;
  if (mode == TINYGLTF_MODE_TRIANGLES) {
    out.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(idx.size() / 3 * 3));
  } else if (mode == TINYGLTF_MODE_TRIANGLE_STRIP) {
    for (size_t i = 2; i < idx.size(); ++i) {
      bool even = (i % 2) == 0;
      out.insert(out.end(), {idx[i - 2], even ? idx[i - 1] : idx[i], even ? idx[i] : idx[i - 1]});
    }
  } else if (mode == TINYGLTF_MODE_TRIANGLE_FAN) {
    for (size_t i = 2; i < idx.size(); ++i) out.insert(out.end(), {idx[0], idx[i - 1], idx[i]});
  }
  return out;
}

double determinant(const Transform& t) {
  const auto& m = t.m;
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

struct PrimitiveData {
  std::vector<Vec3> positions, normals;
  std::vector<Vec2> uv0, uv1;
  std::vector<Color> colors;
  std::vector<uint32_t> corners;  // 3 per triangle, into the arrays above
  uint32_t material = 0;
};

std::vector<Vec3> as_vec3(const std::vector<float>& f) {
  std::vector<Vec3> out(f.size() / 3);
  for (size_t i = 0; i < out.size(); ++i) out[i] = {f[3 * i], f[3 * i + 1], f[3 * i + 2]};
  return out;
}

// glTF's v runs down the image; the renderer's up (as OBJ's), so flip it here once.
std::vector<Vec2> as_uv(const std::vector<float>& f) {
  std::vector<Vec2> out(f.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = {f[2 * i], 1.0f - f[2 * i + 1]};
  return out;
}

PrimitiveData read_primitive(const tinygltf::Model& model, const tinygltf::Primitive& p, uint32_t default_material) {
  PrimitiveData d;
  int pos = attribute(p, "POSITION");
  if (pos < 0) throw GltfError("a triangle primitive has no POSITION attribute");
  d.positions = as_vec3(read_gltf_floats(model, pos, 3));
  const size_t n = d.positions.size();
  auto same_count = [&](int acc, const char* what) {
    if (gltf_accessor_count(model, acc) != n) {
      throw GltfError(std::string(what) + " accessor " + std::to_string(acc) + " has " +
                      std::to_string(gltf_accessor_count(model, acc)) + " elements, POSITION has " + std::to_string(n));
    }
  };
  if (int a = attribute(p, "NORMAL"); a >= 0) same_count(a, "NORMAL"), d.normals = as_vec3(read_gltf_floats(model, a, 3));
  if (int a = attribute(p, "TEXCOORD_0"); a >= 0) same_count(a, "TEXCOORD_0"), d.uv0 = as_uv(read_gltf_floats(model, a, 2));
  if (int a = attribute(p, "TEXCOORD_1"); a >= 0) same_count(a, "TEXCOORD_1"), d.uv1 = as_uv(read_gltf_floats(model, a, 2));
  if (int a = attribute(p, "COLOR_0"); a >= 0) {
    same_count(a, "COLOR_0");
    std::vector<float> c = read_gltf_floats(model, a, 4);  // VEC3 read with alpha 1
    d.colors.resize(n);
    for (size_t i = 0; i < n; ++i) d.colors[i] = max(Color{c[4 * i], c[4 * i + 1], c[4 * i + 2]}, Color{0.0f});
  }
  std::vector<uint32_t> idx;
  if (p.indices >= 0) {
    idx = read_gltf_indices(model, p.indices);
  } else {
    idx.resize(n);
    for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(i);
  }
  for (uint32_t i : idx) {
    if (i >= n) throw GltfError("index " + std::to_string(i) + " refers past the " + std::to_string(n) + " vertices");
  }
  d.corners = triangle_corners(idx, p.mode);
  if (p.material >= static_cast<int>(model.materials.size())) {
    throw GltfError("a primitive refers to material " + std::to_string(p.material) + ", which does not exist (the file has " +
                    std::to_string(model.materials.size()) + ")");
  }
  d.material = p.material >= 0 ? static_cast<uint32_t>(p.material) : default_material;
  return d;
}

void check_vertex_room(const TriangleMesh& out, size_t adding) {
  if (out.positions.size() + adding > std::numeric_limits<uint32_t>::max()) throw GltfError("more than 2^32 vertices");
}

// Appends one primitive placed by `world`. Normals go through the inverse transpose; a
// mirroring transform flips the winding so the geometric normal keeps pointing outwards.
// Without normals the primitive shades flat (the spec's rule): when other primitives have
// normals, its triangles get their own three vertices carrying the face normal.
void append(const PrimitiveData& d, const Transform& world, TriangleMesh& out, const bool want[4]) {
  const bool mirrored = determinant(world) < 0;
  const bool flat = want[0] && d.normals.empty();
  auto push_vertex = [&](uint32_t i, const Vec3* face_normal) {
    out.positions.push_back(world.point(d.positions[i]));
    if (want[0]) out.normals.push_back(face_normal ? *face_normal : transform_normal(world, d.normals[i]));
    if (want[1]) out.uvs.push_back(d.uv0.empty() ? Vec2{} : d.uv0[i]);
    if (want[2]) out.uvs1.push_back(d.uv1.empty() ? (d.uv0.empty() ? Vec2{} : d.uv0[i]) : d.uv1[i]);
    if (want[3]) out.colors.push_back(d.colors.empty() ? Color{1.0f} : d.colors[i]);
  };
  const size_t tris = d.corners.size() / 3;
  if (flat) {
    check_vertex_room(out, 3 * tris);
    for (size_t t = 0; t < tris; ++t) {
      auto base = static_cast<uint32_t>(out.positions.size());
      Vec3 p0 = world.point(d.positions[d.corners[3 * t]]), p1 = world.point(d.positions[d.corners[3 * t + 1]]),
           p2 = world.point(d.positions[d.corners[3 * t + 2]]);
      Vec3 n = normalize(mirrored ? cross(p2 - p0, p1 - p0) : cross(p1 - p0, p2 - p0));
      for (int k = 0; k < 3; ++k) push_vertex(d.corners[3 * t + k], &n);
      out.indices.insert(out.indices.end(), {base, mirrored ? base + 2 : base + 1, mirrored ? base + 1 : base + 2});
      out.face_materials.push_back(d.material);
    }
    return;
  }
  check_vertex_room(out, d.positions.size());
  auto base = static_cast<uint32_t>(out.positions.size());
  for (uint32_t i = 0; i < d.positions.size(); ++i) push_vertex(i, nullptr);
  for (size_t t = 0; t < tris; ++t) {
    uint32_t a = d.corners[3 * t], b = d.corners[3 * t + 1], c = d.corners[3 * t + 2];
    if (mirrored) std::swap(b, c);
    out.indices.insert(out.indices.end(), {base + a, base + b, base + c});
    out.face_materials.push_back(d.material);
  }
}

bool is_triangles(const tinygltf::Primitive& p) {
  return p.mode == TINYGLTF_MODE_TRIANGLES || p.mode == TINYGLTF_MODE_TRIANGLE_STRIP ||
         p.mode == TINYGLTF_MODE_TRIANGLE_FAN || p.mode == -1;
}

}  // namespace

TriangleMesh gltf_triangles(const tinygltf::Model& model, const std::vector<GltfNodeInstance>& nodes,
                            uint32_t default_material) {
  // Read each primitive once, however many nodes place it.
  std::vector<std::vector<PrimitiveData>> meshes(model.meshes.size());
  std::vector<bool> read(model.meshes.size(), false);
  uint64_t triangles = 0;
  bool want[4] = {false, false, false, false};  // normals, uv0, uv1, colours
  for (const GltfNodeInstance& inst : nodes) {
    int m = model.nodes[inst.node].mesh;
    if (m < 0) continue;
    if (m >= static_cast<int>(model.meshes.size())) throw GltfError("node " + std::to_string(inst.node) + " refers to mesh " + std::to_string(m) + ", which does not exist");
    if (!read[m]) {
      for (tinygltf::Primitive p : model.meshes[m].primitives) {
        if (p.mode == -1) p.mode = TINYGLTF_MODE_TRIANGLES;
        if (!is_triangles(p)) continue;  // points and lines have no surface to hit
        meshes[m].push_back(read_primitive(model, p, default_material));
      }
      read[m] = true;
    }
    for (const PrimitiveData& d : meshes[m]) {
      triangles += d.corners.size() / 3;
      want[0] = want[0] || !d.normals.empty();
      want[1] = want[1] || !d.uv0.empty();
      want[2] = want[2] || !d.uv1.empty();
      want[3] = want[3] || !d.colors.empty();
    }
    if (triangles > k_max_triangles) throw GltfError("more than 2^28 triangles once nodes are expanded");
  }
  TriangleMesh out;
  out.indices.reserve(triangles * 3);
  out.face_materials.reserve(triangles);
  for (const GltfNodeInstance& inst : nodes) {
    int m = model.nodes[inst.node].mesh;
    if (m < 0) continue;
    for (const PrimitiveData& d : meshes[m]) append(d, inst.world_from_node, out, want);
  }
  if (out.triangle_count() == 0) throw GltfError("the default scene contains no triangles");
  for (const Vec3& p : out.positions) {
    if (!is_finite(p)) throw GltfError("a vertex position is not finite once transformed");
  }
  return out;
}

}  // namespace rt
