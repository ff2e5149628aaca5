// The default scene's node tree, flattened into world transforms.
#include <tiny_gltf.h>

#include <cmath>

#include "scene/gltf/gltf_document.h"

namespace rt {

namespace {

constexpr size_t k_max_depth = 256;
// Node paths once the tree is expanded (a DAG may reference one subtree many times).
constexpr size_t k_max_instances = size_t{1} << 20;

double finite_or(double v, double fallback) { return std::isfinite(v) ? v : fallback; }

// glTF: matrix (column-major 4x4) or translation * rotation (quaternion x, y, z, w) * scale.
Transform local_transform(const tinygltf::Node& n) {
  Transform t;
  if (n.matrix.size() == 16) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) t.m[r][c] = static_cast<float>(finite_or(n.matrix[c * 4 + r], r == c ? 1 : 0));
    return t;
  }
  double tx = 0, ty = 0, tz = 0, qx = 0, qy = 0, qz = 0, qw = 1, sx = 1, sy = 1, sz = 1;
  if (n.translation.size() == 3) {
    tx = finite_or(n.translation[0], 0), ty = finite_or(n.translation[1], 0), tz = finite_or(n.translation[2], 0);
  }
  if (n.rotation.size() == 4) {
    qx = finite_or(n.rotation[0], 0), qy = finite_or(n.rotation[1], 0), qz = finite_or(n.rotation[2], 0);
    qw = finite_or(n.rotation[3], 1);
    double len = std::sqrt(qx * qx + qy * qy + qz * qz + qw * qw);
    if (len > 0) qx /= len, qy /= len, qz /= len, qw /= len;
    else qw = 1;
  }
  if (n.scale.size() == 3) sx = finite_or(n.scale[0], 1), sy = finite_or(n.scale[1], 1), sz = finite_or(n.scale[2], 1);
  const double r[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)},
                          {2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)},
                          {2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)}};
  const double s[3] = {sx, sy, sz};
  const double tr[3] = {tx, ty, tz};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) t.m[i][j] = static_cast<float>(r[i][j] * s[j]);
    t.m[i][3] = static_cast<float>(tr[i]);
  }
  return t;
}

}  // namespace

std::vector<GltfNodeInstance> gltf_scene_nodes(const tinygltf::Model& model) {
  std::vector<GltfNodeInstance> out;
  const int node_count = static_cast<int>(model.nodes.size());
  std::vector<int> roots;
  if (!model.scenes.empty()) {
    int s = model.defaultScene >= 0 ? model.defaultScene : 0;
    if (s >= static_cast<int>(model.scenes.size())) throw GltfError("'scene' " + std::to_string(s) + " does not exist");
    roots = model.scenes[s].nodes;
  } else {
    // No scene: every node that is nobody's child is a root (the spec leaves this to us).
    std::vector<bool> is_child(node_count, false);
    for (const tinygltf::Node& n : model.nodes)
      for (int c : n.children)
        if (c >= 0 && c < node_count) is_child[c] = true;
    for (int i = 0; i < node_count; ++i)
      if (!is_child[i]) roots.push_back(i);
  }
  struct Item {
    int node;
    Transform parent;
    size_t depth;
  };
  std::vector<Item> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, Transform{}, 0});
  std::vector<int> path;  // nodes on the current root-to-node path, for cycle detection
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (item.node < 0 || item.node >= node_count) {
      throw GltfError("a scene or node refers to node " + std::to_string(item.node) + " of " + std::to_string(node_count));
    }
    if (item.depth >= k_max_depth) throw GltfError("the node tree is deeper than 256 levels (or has a cycle)");
    path.resize(item.depth);
    if (std::find(path.begin(), path.end(), item.node) != path.end()) {
      throw GltfError("node " + std::to_string(item.node) + " is its own ancestor (a cycle in the node tree)");
    }
    path.push_back(item.node);
    const tinygltf::Node& n = model.nodes[item.node];
    Transform world = item.parent * local_transform(n);
    out.push_back({item.node, world});
    if (out.size() > k_max_instances) throw GltfError("the node tree expands to more than 2^20 node instances");
    for (auto c = n.children.rbegin(); c != n.children.rend(); ++c) stack.push_back({*c, world, item.depth + 1});
  }
  return out;
}

}  // namespace rt
