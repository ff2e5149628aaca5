#include "mesh/shapes.h"

#include <cmath>

namespace rt {

namespace {
uint32_t add_vertex(TriangleMesh& m, Vec3 p, Vec3 n, Vec2 uv) {
  m.positions.push_back(p);
  m.normals.push_back(n);
  m.uvs.push_back(uv);
  return static_cast<uint32_t>(m.positions.size() - 1);
}
void add_triangle(TriangleMesh& m, uint32_t a, uint32_t b, uint32_t c) {
  m.indices.insert(m.indices.end(), {a, b, c});
}
}  // namespace

TriangleMesh make_quad(Vec3 corner, Vec3 edge_u, Vec3 edge_v) {
  TriangleMesh m;
  Vec3 n = normalize(cross(edge_u, edge_v));
  uint32_t a = add_vertex(m, corner, n, {0, 0});
  uint32_t b = add_vertex(m, corner + edge_u, n, {1, 0});
  uint32_t c = add_vertex(m, corner + edge_u + edge_v, n, {1, 1});
  uint32_t d = add_vertex(m, corner + edge_v, n, {0, 1});
  add_triangle(m, a, b, c);
  add_triangle(m, a, c, d);
  return m;
}

TriangleMesh make_box(Vec3 lo, Vec3 hi) {
  TriangleMesh m;
  Vec3 size = hi - lo;
  // Six faces, each with its own vertices so normals stay flat; edges chosen so that
  // cross(edge_u, edge_v) points outward.
  struct Face { Vec3 corner, u, v; };
  const Face faces[6] = {
      {{hi.x, lo.y, lo.z}, {0, 0, size.z}, {0, size.y, 0}},  // +x
      {{lo.x, lo.y, hi.z}, {0, 0, -size.z}, {0, size.y, 0}}, // -x
      {{lo.x, hi.y, lo.z}, {0, 0, size.z}, {size.x, 0, 0}},  // +y
      {{lo.x, lo.y, lo.z}, {size.x, 0, 0}, {0, 0, size.z}},  // -y
      {{lo.x, lo.y, hi.z}, {size.x, 0, 0}, {0, size.y, 0}},  // +z
      {{hi.x, lo.y, lo.z}, {-size.x, 0, 0}, {0, size.y, 0}}, // -z
  };
  for (const Face& f : faces) {
    TriangleMesh q = make_quad(f.corner, f.u, f.v);
    uint32_t base = static_cast<uint32_t>(m.positions.size());
    m.positions.insert(m.positions.end(), q.positions.begin(), q.positions.end());
    m.normals.insert(m.normals.end(), q.normals.begin(), q.normals.end());
    m.uvs.insert(m.uvs.end(), q.uvs.begin(), q.uvs.end());
    for (uint32_t i : q.indices) m.indices.push_back(base + i);
  }
  return m;
}

TriangleMesh make_lathe(const std::vector<Vec2>& profile, int segments, bool smooth) {
  TriangleMesh m;
  const int rings = static_cast<int>(profile.size());
  if (rings < 2 || segments < 3) return m;
  // Profile normals in the (r, y) plane: perpendicular to the profile's tangent, averaged
  // at interior points when smooth. The outward side is +r for a profile going up in y.
  std::vector<Vec2> normal2(rings);
  for (int i = 0; i < rings; ++i) {
    Vec2 prev = profile[i > 0 ? i - 1 : i], next = profile[i + 1 < rings ? i + 1 : i];
    float tr = next.x - prev.x, ty = next.y - prev.y;
    float len = std::sqrt(tr * tr + ty * ty);
    normal2[i] = len > 0 ? Vec2{ty / len, -tr / len} : Vec2{1, 0};
  }
  auto vertex = [&](int ring, int seg, Vec2 n2) {
    float phi = 2 * k_pi * static_cast<float>(seg) / static_cast<float>(segments);
    float c = std::cos(phi), s = std::sin(phi);
    Vec3 p{profile[ring].x * c, profile[ring].y, profile[ring].x * s};
    Vec3 n = normalize(Vec3{n2.x * c, n2.y, n2.x * s});
    float v = static_cast<float>(ring) / static_cast<float>(rings - 1);
    return add_vertex(m, p, n, {static_cast<float>(seg) / static_cast<float>(segments), v});
  };
  if (smooth) {
    std::vector<uint32_t> ids(static_cast<size_t>(rings) * (segments + 1));
    for (int r = 0; r < rings; ++r)
      for (int s = 0; s <= segments; ++s) ids[r * (segments + 1) + s] = vertex(r, s, normal2[r]);
    for (int r = 0; r + 1 < rings; ++r) {
      for (int s = 0; s < segments; ++s) {
        uint32_t a = ids[r * (segments + 1) + s], b = ids[r * (segments + 1) + s + 1];
        uint32_t c = ids[(r + 1) * (segments + 1) + s + 1], d = ids[(r + 1) * (segments + 1) + s];
        // Winding chosen so the geometric normal agrees with the outward shading normal.
        add_triangle(m, a, c, b);
        add_triangle(m, a, d, c);
      }
    }
  } else {
    for (int r = 0; r + 1 < rings; ++r) {
      float tr = profile[r + 1].x - profile[r].x, ty = profile[r + 1].y - profile[r].y;
      float len = std::sqrt(tr * tr + ty * ty);
      Vec2 n2 = len > 0 ? Vec2{ty / len, -tr / len} : Vec2{1, 0};
      for (int s = 0; s < segments; ++s) {
        uint32_t a = vertex(r, s, n2), b = vertex(r, s + 1, n2);
        uint32_t c = vertex(r + 1, s + 1, n2), d = vertex(r + 1, s, n2);
        add_triangle(m, a, c, b);
        add_triangle(m, a, d, c);
      }
    }
  }
  // Drop degenerate triangles (rings of radius 0 at the poles produce some).
  std::vector<uint32_t> kept;
  kept.reserve(m.indices.size());
  for (size_t t = 0; t + 2 < m.indices.size(); t += 3) {
    Vec3 p0 = m.positions[m.indices[t]], p1 = m.positions[m.indices[t + 1]], p2 = m.positions[m.indices[t + 2]];
    if (length_squared(cross(p1 - p0, p2 - p0)) > 1e-20f) kept.insert(kept.end(), {m.indices[t], m.indices[t + 1], m.indices[t + 2]});
  }
  m.indices.swap(kept);
  return m;
}

TriangleMesh make_cylinder(float radius, float height, int segments) {
  // A flat-shaded cap, a smooth side, a flat cap: a lathe profile through the axis, with
  // duplicated corner points so the side's normals do not bend into the caps.
  TriangleMesh side = make_lathe({{radius, 0}, {radius, height}}, segments, true);
  TriangleMesh bottom = make_lathe({{0, 0}, {radius, 0}}, segments, true);
  TriangleMesh top = make_lathe({{radius, height}, {0, height}}, segments, true);
  for (TriangleMesh* part : {&bottom, &top}) {
    uint32_t base = static_cast<uint32_t>(side.positions.size());
    side.positions.insert(side.positions.end(), part->positions.begin(), part->positions.end());
    side.normals.insert(side.normals.end(), part->normals.begin(), part->normals.end());
    side.uvs.insert(side.uvs.end(), part->uvs.begin(), part->uvs.end());
    for (uint32_t i : part->indices) side.indices.push_back(base + i);
  }
  return side;
}

void transform_mesh(TriangleMesh& mesh, const Transform& world_from_object) {
  if (world_from_object.is_identity()) return;
  for (Vec3& p : mesh.positions) p = world_from_object.point(p);
  if (!mesh.normals.empty()) {
    Transform inv = inverse(world_from_object);
    for (Vec3& n : mesh.normals) {
      n = normalize({inv.m[0][0] * n.x + inv.m[1][0] * n.y + inv.m[2][0] * n.z,
                     inv.m[0][1] * n.x + inv.m[1][1] * n.y + inv.m[2][1] * n.z,
                     inv.m[0][2] * n.x + inv.m[1][2] * n.y + inv.m[2][2] * n.z});
    }
  }
}

}  // namespace rt
