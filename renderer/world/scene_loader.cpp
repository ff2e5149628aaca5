// load_scene: scene description -> Embree geometry, materials, textures and lights.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "world/cutout_filter.h"
#include "world/scene.h"
#include "mesh/shapes.h"

namespace rt {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Uploads a mesh as an Embree triangle geometry. The scene keeps the geometry alive after
// attach, so we release our reference at once.
unsigned attach_triangles(const EmbreeDevice& device, RTCScene scene, const TriangleMesh& mesh,
                          const CutoutData* cutout = nullptr) {
  RTCGeometry geom = rtcNewGeometry(device.get(), RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                        3 * sizeof(float), mesh.positions.size()));
  auto* ix = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                            3 * sizeof(uint32_t), mesh.triangle_count()));
  if (!v || !ix) {
    rtcReleaseGeometry(geom);
    device.check("allocating a triangle buffer");
    throw std::runtime_error("Embree could not allocate a triangle buffer");
  }
  for (size_t i = 0; i < mesh.positions.size(); ++i) {
    v[3 * i] = mesh.positions[i].x;
    v[3 * i + 1] = mesh.positions[i].y;
    v[3 * i + 2] = mesh.positions[i].z;
  }
  std::copy(mesh.indices.begin(), mesh.indices.end(), ix);
  if (cutout) {
    // The record owns `cutout` (heap, stable address) and outlives the Embree scene's use.
    rtcSetGeometryUserData(geom, const_cast<CutoutData*>(cutout));
    rtcSetGeometryIntersectFilterFunction(geom, cutout_filter);
    rtcSetGeometryOccludedFilterFunction(geom, cutout_filter);
  }
  rtcCommitGeometry(geom);
  unsigned id = rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
  return id;
}

unsigned attach_spheres(const EmbreeDevice& device, RTCScene scene, const GeometryRecord& rec) {
  RTCGeometry geom = rtcNewGeometry(device.get(), RTC_GEOMETRY_TYPE_SPHERE_POINT);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT4,
                                                        4 * sizeof(float), rec.sphere_centers.size()));
  for (size_t i = 0; i < rec.sphere_centers.size(); ++i) {
    v[4 * i] = rec.sphere_centers[i].x;
    v[4 * i + 1] = rec.sphere_centers[i].y;
    v[4 * i + 2] = rec.sphere_centers[i].z;
    v[4 * i + 3] = rec.sphere_radii[i];
  }
  rtcCommitGeometry(geom);
  unsigned id = rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
  return id;
}

unsigned attach_instance(const EmbreeDevice& device, RTCScene scene, RTCScene child, const Transform& t) {
  RTCGeometry geom = rtcNewGeometry(device.get(), RTC_GEOMETRY_TYPE_INSTANCE);
  rtcSetGeometryInstancedScene(geom, child);
  rtcSetGeometryTransform(geom, 0, RTC_FORMAT_FLOAT3X4_ROW_MAJOR, &t.m[0][0]);
  rtcCommitGeometry(geom);
  unsigned id = rtcAttachGeometry(scene, geom);
  rtcReleaseGeometry(geom);
  return id;
}

void put_record(std::vector<GeometryRecord>& records, unsigned id, GeometryRecord rec) {
  if (records.size() <= id) records.resize(id + 1);
  records[id] = std::move(rec);
}

// Uniform scale factor of a transform (cube root of |det|): spheres stay spheres.
float uniform_scale(const Transform& t) {
  const auto& m = t.m;
  double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
               m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  return static_cast<float>(std::cbrt(std::fabs(det)));
}

void rebase(TextureRef& ref, int base) {
  if (ref.valid()) ref.texture += base;
}

// A mesh file's materials index its own texture list; the scene's list holds them after
// the scene file's and earlier files' textures.
void rebase_textures(MaterialDesc& m, int base) {
  for (TextureRef* ref : {static_cast<TextureRef*>(&m.albedo), &m.metallic_roughness, &m.normal_map, &m.bump_map,
                          &m.emission_map, &m.opacity_map})
    rebase(*ref, base);
}

MaterialUse material_use(const MaterialDesc& m) {
  MaterialUse u;
  u.uvs = m.albedo.valid() || m.metallic_roughness.valid() || m.normal_map.valid() || m.bump_map.valid() ||
          m.emission_map.valid() || m.opacity_map.valid();
  u.vertex_colors = m.vertex_colors;
  u.tangents = m.normal_map.valid() || m.bump_map.valid();
  u.cutout = m.alpha_mode != AlphaMode::opaque;
  return u;
}

class Loader {
 public:
  Loader(Scene& scene) : m_scene(scene) {}

  void run() {
    const SceneDesc& desc = m_scene.desc;
    for (const TextureDesc& t : desc.textures) m_scene.textures.add(t);
    m_scene.textures.decode_resident();
    m_scene.materials = desc.materials;
    m_scene.lights.set_textures(&m_scene.textures);
    RgbImage env_image;
    if (!desc.environment.image_path.empty()) env_image = read_rgb_image(desc.environment.image_path, {});
    m_scene.environment = Environment(desc.environment.color, std::move(env_image), desc.environment.strength,
                                      desc.environment.rotation_degrees);
    for (const LightDesc& l : desc.lights) m_scene.lights.add(l);

    count_mesh_uses();
    for (const PrototypeDesc& p : desc.prototypes) m_prototype_child.push_back(build_child(p.objects));
    GeometryRecord spheres;
    spheres.kind = GeometryKind::spheres;
    for (const ObjectDesc& o : desc.objects) add_object(o, m_scene.root.get(), m_scene.records, &spheres, true);
    if (!spheres.sphere_centers.empty()) {
      register_sphere_lights(spheres);
      unsigned id = attach_spheres(m_scene.device, m_scene.root.get(), spheres);
      put_record(m_scene.records, id, std::move(spheres));
    }
    m_scene.material_uses.clear();
    for (const MaterialDesc& m : m_scene.materials) m_scene.material_uses.push_back(material_use(m));
  }

 private:
  void count_mesh_uses() {
    for (const ObjectDesc& o : m_scene.desc.objects)
      if (o.kind == ShapeKind::mesh) ++m_mesh_uses[o.path];
  }

  // A mesh file's triangles in object space and the offset of its materials, loaded once.
  std::pair<const TriangleMesh*, int> mesh_file(const ObjectDesc& o) {
    auto it = m_mesh_files.find(o.path);
    if (it != m_mesh_files.end()) return it->second;
    LoadedMeshFile file = load_mesh_file(o.path, o.loc);
    int base = static_cast<int>(m_scene.materials.size());
    const int texture_base = static_cast<int>(m_scene.textures.size());
    for (const TextureDesc& t : file.textures) m_scene.textures.add(t);
    // Before the mesh's emitters are registered: their power is read from the textures.
    m_scene.textures.decode_resident();
    for (MaterialDesc& m : file.materials) {
      rebase_textures(m, texture_base);
      m_scene.materials.push_back(std::move(m));
    }
    if (!o.smooth) file.mesh.normals.clear();
    m_scene.meshes.push_back(std::move(file.mesh));
    auto entry = std::make_pair(&m_scene.meshes.back(), base);
    m_mesh_files.emplace(o.path, entry);
    return entry;
  }

  int build_child(const std::vector<ObjectDesc>& objects) {
    ChildScene child;
    child.scene = EmbreeScene(m_scene.device);
    GeometryRecord spheres;
    spheres.kind = GeometryKind::spheres;
    for (const ObjectDesc& o : objects) add_object(o, child.scene.get(), child.records, &spheres, false);
    if (!spheres.sphere_centers.empty()) {
      unsigned id = attach_spheres(m_scene.device, child.scene.get(), spheres);
      put_record(child.records, id, std::move(spheres));
    }
    auto t0 = std::chrono::steady_clock::now();
    rtcCommitScene(child.scene.get());
    m_scene.device.check("building a prototype");
    m_scene.stats.bvh_seconds += seconds_since(t0);
    m_scene.children.push_back(std::move(child));
    return static_cast<int>(m_scene.children.size() - 1);
  }

  int mesh_child(const ObjectDesc& o) {
    auto it = m_mesh_child.find(o.path);
    if (it != m_mesh_child.end()) return it->second;
    auto [mesh, base] = mesh_file(o);
    ChildScene child;
    child.scene = EmbreeScene(m_scene.device);
    GeometryRecord rec;
    rec.mesh = mesh;
    rec.material_base = base;
    rec.cutout = cutout_data(rec);
    unsigned id = attach_triangles(m_scene.device, child.scene.get(), *mesh, rec.cutout.get());
    put_record(child.records, id, std::move(rec));
    auto t0 = std::chrono::steady_clock::now();
    rtcCommitScene(child.scene.get());
    m_scene.device.check("building a mesh");
    m_scene.stats.bvh_seconds += seconds_since(t0);
    m_scene.stats.triangles += mesh->triangle_count();
    m_scene.children.push_back(std::move(child));
    int index = static_cast<int>(m_scene.children.size() - 1);
    m_mesh_child.emplace(o.path, index);
    return index;
  }

  void add_instance(RTCScene scene, std::vector<GeometryRecord>& records, int child, const ObjectDesc& o) {
    GeometryRecord rec;
    rec.kind = GeometryKind::instance;
    rec.child = child;
    rec.material_override = o.material;
    rec.world_from_object = o.world_from_object;
    rec.object_from_world = inverse(o.world_from_object);
    unsigned id = attach_instance(m_scene.device, scene, m_scene.children[child].scene.get(), o.world_from_object);
    put_record(records, id, std::move(rec));
    ++m_scene.stats.instances;
  }

  void add_object(const ObjectDesc& o, RTCScene scene, std::vector<GeometryRecord>& records, GeometryRecord* spheres,
                  bool top_level) {
    switch (o.kind) {
      case ShapeKind::sphere:
        spheres->sphere_centers.push_back(o.world_from_object.point(o.center));
        spheres->sphere_radii.push_back(o.radius * uniform_scale(o.world_from_object));
        spheres->sphere_materials.push_back(o.material);
        ++m_scene.stats.spheres;
        return;
      case ShapeKind::instance:
        add_instance(scene, records, m_prototype_child.at(o.prototype), o);
        return;
      case ShapeKind::mesh:
        if (top_level && m_mesh_uses[o.path] > 1) {
          add_instance(scene, records, mesh_child(o), o);
          return;
        }
        break;
      default:
        break;
    }
    TriangleMesh mesh;
    int base = 0;
    switch (o.kind) {
      case ShapeKind::quad: mesh = make_quad(o.corner, o.edge_u, o.edge_v); break;
      case ShapeKind::box: mesh = make_box(o.box_min, o.box_max); break;
      case ShapeKind::cylinder: mesh = make_cylinder(o.radius, o.height, o.segments); break;
      case ShapeKind::lathe: mesh = make_lathe(o.profile, o.segments, o.smooth); break;
      case ShapeKind::mesh: {
        auto [file_mesh, file_base] = mesh_file(o);
        mesh = *file_mesh;
        base = file_base;
        break;
      }
      default: break;
    }
    if (mesh.indices.empty()) return;
    if (o.kind != ShapeKind::mesh || o.material >= 0) {
      mesh.face_materials.clear();
      mesh.material = o.material;
      base = 0;
    }
    transform_mesh(mesh, o.world_from_object);
    m_scene.stats.triangles += mesh.triangle_count();
    m_scene.meshes.push_back(std::move(mesh));
    const TriangleMesh& stored = m_scene.meshes.back();
    GeometryRecord rec;
    rec.mesh = &stored;
    rec.material_base = base;
    rec.cutout = cutout_data(rec);
    if (top_level) register_triangle_lights(rec);
    unsigned id = attach_triangles(m_scene.device, scene, stored, rec.cutout.get());
    put_record(records, id, std::move(rec));
  }

  int material_of(const GeometryRecord& rec, size_t prim) const {
    const TriangleMesh& m = *rec.mesh;
    return m.face_materials.empty() ? m.material : rec.material_base + static_cast<int>(m.face_materials[prim]);
  }

  void register_triangle_lights(GeometryRecord& rec) {
    const TriangleMesh& m = *rec.mesh;
    for (size_t t = 0; t < m.triangle_count(); ++t) {
      int mat = material_of(rec, t);
      if (mat < 0 || !has_emission(m_scene.materials[mat])) continue;
      const MaterialDesc& md = m_scene.materials[mat];
      const uint32_t* ix = &m.indices[3 * t];
      int light = -1;
      if (md.emission_map.valid() && !m.uvs.empty()) {
        EmissionTexture tex;
        tex.ref = md.emission_map;
        for (int k = 0; k < 3; ++k) tex.corners[k] = {m.uvs[ix[k]], m.uvs1.empty() ? m.uvs[ix[k]] : m.uvs1[ix[k]]};
        Color mean = mean_emission_texture(tex, m.positions[ix[0]]);
        // A triangle whose texture is black where we looked is left to BSDF sampling alone
        // (still unbiased: light sampling just never picks it). This keeps the thousands of
        // dark triangles of a mostly black emissive map (DamagedHelmet) out of the light list.
        if (is_black(mean)) continue;
        light = m_scene.lights.add_triangle(m.positions[ix[0]], m.positions[ix[1]], m.positions[ix[2]], md.emission,
                                            md.two_sided, &tex, mean);
      } else {
        light = m_scene.lights.add_triangle(m.positions[ix[0]], m.positions[ix[1]], m.positions[ix[2]], md.emission,
                                            md.two_sided);
      }
      if (light < 0) continue;
      if (rec.prim_lights.empty()) rec.prim_lights.assign(m.triangle_count(), -1);
      rec.prim_lights[t] = light;
      ++m_scene.stats.emitters;
    }
  }

  // The emission texture's mean over a triangle, from its corners, edge midpoints and centre.
  Color mean_emission_texture(const EmissionTexture& tex, Vec3 p) const {
    static constexpr float k_points[7][3] = {{1, 0, 0},         {0, 1, 0},         {0, 0, 1},        {0.5f, 0.5f, 0},
                                             {0, 0.5f, 0.5f},   {0.5f, 0, 0.5f},   {1 / 3.0f, 1 / 3.0f, 1 / 3.0f}};
    Color sum{0.0f};
    for (const auto& b : k_points) {
      HitUvs uvs{tex.corners[0].uv0 * b[0] + tex.corners[1].uv0 * b[1] + tex.corners[2].uv0 * b[2],
                 tex.corners[0].uv1 * b[0] + tex.corners[1].uv1 * b[1] + tex.corners[2].uv1 * b[2]};
      sum += m_scene.textures.color(tex.ref, p, uvs);
    }
    return sum * (1.0f / 7.0f);
  }

  // Filter data when some material the mesh can show is cut out (alpha mask or blend):
  // its own materials, or any of the scene file's, which objects and instances may assign.
  std::unique_ptr<CutoutData> cutout_data(const GeometryRecord& rec) const {
    const TriangleMesh& m = *rec.mesh;
    auto cut = [&](int mat) {
      return mat >= 0 && mat < static_cast<int>(m_scene.materials.size()) &&
             m_scene.materials[mat].alpha_mode != AlphaMode::opaque;
    };
    bool any = cut(m.material);
    for (const MaterialDesc& md : m_scene.desc.materials) any = any || md.alpha_mode != AlphaMode::opaque;
    for (size_t f = 0; f < m.face_materials.size() && !any; ++f) any = cut(rec.material_base + m.face_materials[f]);
    if (!any) return nullptr;
    auto data = std::make_unique<CutoutData>();
    data->scene = &m_scene;
    data->mesh = rec.mesh;
    data->material_base = rec.material_base;
    return data;
  }

  void register_sphere_lights(GeometryRecord& rec) {
    for (size_t i = 0; i < rec.sphere_centers.size(); ++i) {
      int mat = rec.sphere_materials[i];
      if (mat < 0 || !has_emission(m_scene.materials[mat])) continue;
      if (rec.prim_lights.empty()) rec.prim_lights.assign(rec.sphere_centers.size(), -1);
      rec.prim_lights[i] = m_scene.lights.add_sphere(rec.sphere_centers[i], rec.sphere_radii[i],
                                                     m_scene.materials[mat].emission);
      ++m_scene.stats.emitters;
    }
  }

  Scene& m_scene;
  std::map<std::string, int> m_mesh_uses;
  std::map<std::string, std::pair<const TriangleMesh*, int>> m_mesh_files;
  std::map<std::string, int> m_mesh_child;
  std::vector<int> m_prototype_child;
};

}  // namespace

std::unique_ptr<Scene> load_scene(const SceneDesc& desc, const LoadOptions& options) {
  auto scene = std::make_unique<Scene>(options.texture_cache_mb);
  scene->desc = desc;
  // Embree picks its kernels at run time, and its AVX-512 kernels (like its SSE/AVX ones) give hit
  // distances and barycentrics that differ in the last bits from its AVX2 ones: one scene rendered
  // on an AVX2 and on an AVX-512 machine would differ. Capping at AVX2 makes every machine with
  // AVX2 (x86-64-v3) render the same bits, golden images and a farm's mixed workers included.
  std::string config = "max_isa=avx2";
  if (options.embree_threads > 0) config += ",threads=" + std::to_string(options.embree_threads);
  scene->device = EmbreeDevice(config);
  scene->root = EmbreeScene(scene->device);

  auto t0 = std::chrono::steady_clock::now();
  Loader(*scene).run();
  // The loader also committed the prototypes' BVHs; those count as BVH time, not load time.
  scene->stats.load_seconds = seconds_since(t0) - scene->stats.bvh_seconds;

  auto t1 = std::chrono::steady_clock::now();
  rtcCommitScene(scene->root.get());
  scene->device.check("building the scene");
  scene->stats.bvh_seconds += seconds_since(t1);

  RTCBounds b;
  rtcGetSceneBounds(scene->root.get(), &b);
  if (b.lower_x <= b.upper_x) {
    scene->bounds_min = {b.lower_x, b.lower_y, b.lower_z};
    scene->bounds_max = {b.upper_x, b.upper_y, b.upper_z};
    scene->scene_radius = 0.5f * length(scene->bounds_max - scene->bounds_min);
  }
  scene->has_emission = !scene->environment.is_black() ||
                        std::any_of(scene->materials.begin(), scene->materials.end(),
                                    [](const MaterialDesc& m) { return has_emission(m); });
  if (scene->lights.empty() && !scene->has_emission) {
    // Usually a data slip (an MTL without the light's material, a glTF exported without lights
    // into a TOML scene that gives none): say so rather than silently writing a black image.
    scene->notices.push_back("nothing in the scene emits light (no lights, no emissive material, a black "
                             "environment): the image will be black");
  }
  scene->lights.set_environment(&scene->environment);
  scene->lights.finalize(scene->scene_radius);
  return scene;
}

}  // namespace rt
