// Procedural shapes tessellated into triangle meshes in object space.
#pragma once

#include <vector>

#include "mesh/mesh.h"

namespace rt {

TriangleMesh make_quad(Vec3 corner, Vec3 edge_u, Vec3 edge_v);
TriangleMesh make_box(Vec3 lo, Vec3 hi);
// Surface of revolution about +Y of (radius, y) points; `smooth` interpolates normals.
TriangleMesh make_lathe(const std::vector<Vec2>& profile, int segments, bool smooth);
// Capped cylinder from y = 0 to y = height.
TriangleMesh make_cylinder(float radius, float height, int segments);

// Applies a transform to positions and normals in place.
void transform_mesh(TriangleMesh& mesh, const Transform& world_from_object);

}  // namespace rt
