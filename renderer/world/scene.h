// A scene ready to render: materials, textures and lights resolved, geometry in Embree.
// Built once by load_scene() (the heavy step: meshes, images, BVH) and then only read,
// concurrently, by any number of render threads.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "embree/embree_handles.h"
#include "mesh/mesh.h"
#include "scene/scene_desc.h"
#include "shading/environment.h"
#include "shading/lights.h"
#include "shading/texture.h"

namespace rt {

enum class GeometryKind { triangles, spheres, instance };

// Which per-hit attributes a material reads, so the tracer computes only those.
struct MaterialUse {
  bool uvs = false;            // any texture by uv
  bool vertex_colors = false;
  bool tangents = false;       // normal or bump map
  bool cutout = false;         // alpha mask/blend: rays may pass through
};

struct Scene;

// What an Embree geometry with cut-out materials needs in its filter function.
struct CutoutData {
  const Scene* scene = nullptr;
  const struct TriangleMesh* mesh = nullptr;
  int material_base = 0;
};

// What an Embree geometry ID stands for.
struct GeometryRecord {
  GeometryKind kind = GeometryKind::triangles;
  const TriangleMesh* mesh = nullptr;  // triangles (owned by Scene::meshes)
  int material_base = 0;               // added to mesh->face_materials entries
  std::vector<Vec3> sphere_centers;    // spheres, in the space of the owning Embree scene
  std::vector<float> sphere_radii;
  std::vector<int> sphere_materials;
  std::vector<int> prim_lights;        // per primitive: index into Scene::lights, or -1; may be empty
  std::unique_ptr<CutoutData> cutout;  // set when some material of the mesh is cut out (alpha)
  // instance
  int child = -1;                      // index into Scene::children
  int material_override = -1;          // instance: replaces every material inside, if >= 0
  Transform world_from_object, object_from_world;
};

// An Embree scene that instances refer to (an explicit prototype or a mesh used many times).
struct ChildScene {
  EmbreeScene scene;
  std::vector<GeometryRecord> records;  // indexed by geometry ID inside `scene`
};

struct LoadStats {
  double load_seconds = 0;   // meshes, textures, tessellation
  double bvh_seconds = 0;    // Embree commits
  size_t triangles = 0;      // unique triangles stored
  size_t instances = 0;
  size_t spheres = 0;
  size_t emitters = 0;       // area-light primitives
};

struct Scene {
  SceneDesc desc;
  std::vector<MaterialDesc> materials;  // the file's, then every mesh file's own
  std::vector<MaterialUse> material_uses;  // one per material
  TextureStore textures;                // the file's, then every mesh file's own
  std::deque<TriangleMesh> meshes;      // deque: records hold pointers
  Environment environment;
  LightSet lights;
  EmbreeDevice device;
  EmbreeScene root;
  std::vector<GeometryRecord> records;  // indexed by geometry ID in `root`
  std::vector<ChildScene> children;
  Vec3 bounds_min{0.0f}, bounds_max{0.0f};
  float scene_radius = 1;
  // Some material emits or the environment is not black: a path's last ray can find light.
  bool has_emission = false;
  LoadStats stats;
  // One-line remarks for the user found while loading (e.g. nothing emits light).
  std::vector<std::string> notices;

  MaterialUse material_use(int material) const {
    return material >= 0 && material < static_cast<int>(material_uses.size()) ? material_uses[material]
                                                                                : MaterialUse{};
  }

  explicit Scene(int texture_cache_mb = 1024) : textures(texture_cache_mb) {}
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;
};

struct LoadOptions {
  int embree_threads = 0;      // 0 = all
  int texture_cache_mb = 1024; // decoded texels held at once, shared by all threads
};

// The heavy step. Throws SceneError (bad meshes, images) or std::runtime_error (Embree).
std::unique_ptr<Scene> load_scene(const SceneDesc& desc, const LoadOptions& options = {});

}  // namespace rt
