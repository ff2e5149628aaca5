// A glTF 2.0 file used whole as a scene file: its geometry (one mesh object, loaded later by
// load_scene), its cameras, its KHR_lights_punctual lights, and defaults for what it lacks.
#include "scene/gltf/gltf_scene.h"

#include <tiny_gltf.h>

#include <cmath>
#include <filesystem>

#include "scene/gltf/gltf_accessors.h"

namespace rt {

namespace {

constexpr float k_pi_f = 3.14159265358979f;
constexpr float k_default_fov = 39.6f;  // Blender's default camera (50 mm on a 36 mm sensor), vertical at 1:1

float finite_float_or(double v, float fallback) { return std::isfinite(v) ? static_cast<float>(v) : fallback; }

NamedCamera read_camera(const tinygltf::Camera& c, int index, const Transform& world) {
  NamedCamera out;
  out.name = c.name.empty() ? "camera " + std::to_string(index) : c.name;
  // glTF cameras look down their node's -Z with +Y up.
  Vec3 position = world.point({0, 0, 0});
  Vec3 forward = normalize(world.vector({0, 0, -1}));
  Vec3 up = normalize(world.vector({0, 1, 0}));
  if (!is_finite(position) || !is_finite(forward) || !is_finite(up)) {
    throw GltfError("camera " + std::to_string(index) + "'s node transform is degenerate");
  }
  out.key.position = position;
  out.key.look_at = position + forward;
  out.key.up = up;
  if (c.type == "orthographic") {
    float ymag = std::fabs(finite_float_or(c.orthographic.ymag, 1.0f)), xmag = std::fabs(finite_float_or(c.orthographic.xmag, 1.0f));
    if (!(ymag > 0)) throw GltfError("camera " + std::to_string(index) + " has ymag 0");
    out.key.ortho_height = 2 * ymag;
    out.aspect_ratio = xmag > 0 ? xmag / ymag : 0;
  } else {
    float yfov = finite_float_or(c.perspective.yfov, 0.0f);
    if (!(yfov > 0 && yfov < k_pi_f)) throw GltfError("camera " + std::to_string(index) + " has an invalid yfov");
    out.key.fov_degrees = yfov * 180.0f / k_pi_f;
    float aspect = finite_float_or(c.perspective.aspectRatio, 0.0f);
    out.aspect_ratio = aspect > 0 ? aspect : 0;
  }
  return out;
}

// KHR_lights_punctual. Units: the extension gives candela (point, spot) and lux (directional);
// we read them one to one as W/sr and W/m^2 of our linear RGB (see docs: the scene format).
LightDesc read_light(const tinygltf::Light& l, int index, const Transform& world) {
  LightDesc d;
  d.loc = {"", 0, 0};
  Color color = l.color.size() >= 3 ? Color{finite_float_or(l.color[0], 1), finite_float_or(l.color[1], 1), finite_float_or(l.color[2], 1)}
                                    : Color{1.0f};
  d.intensity = max(color, Color{0.0f}) * std::max(0.0f, finite_float_or(l.intensity, 1.0f));
  d.position = world.point({0, 0, 0});
  d.direction = normalize(world.vector({0, 0, -1}));
  if (!is_finite(d.position) || !is_finite(d.direction)) {
    throw GltfError("light " + std::to_string(index) + "'s node transform is degenerate");
  }
  if (l.type == "directional") {
    d.kind = LightKind::directional;
  } else if (l.type == "spot") {
    d.kind = LightKind::spot;
    float inner = std::clamp(finite_float_or(l.spot.innerConeAngle, 0.0f), 0.0f, k_pi_f / 2);
    float outer = std::clamp(finite_float_or(l.spot.outerConeAngle, k_pi_f / 4), inner, k_pi_f / 2);
    d.cone_degrees = inner * 180.0f / k_pi_f;
    d.falloff_degrees = (outer - inner) * 180.0f / k_pi_f;
  } else if (l.type == "point") {
    d.kind = LightKind::point;
  } else {
    throw GltfError("light " + std::to_string(index) + " has unknown type '" + l.type + "'");
  }
  return d;
}

void grow(Vec3& lo, Vec3& hi, Vec3 p) {
  lo = min(lo, p);
  hi = max(hi, p);
}

// The default scene's bounds from each POSITION accessor's min/max (required by the spec),
// or its data when they are missing.
bool scene_bounds(const tinygltf::Model& m, const std::vector<GltfNodeInstance>& nodes, Vec3& lo, Vec3& hi) {
  lo = Vec3{1e30f};
  hi = Vec3{-1e30f};
  bool any = false;
  for (const GltfNodeInstance& inst : nodes) {
    int mesh = m.nodes[inst.node].mesh;
    if (mesh < 0 || mesh >= static_cast<int>(m.meshes.size())) continue;
    for (const tinygltf::Primitive& p : m.meshes[mesh].primitives) {
      auto it = p.attributes.find("POSITION");
      if (it == p.attributes.end() || it->second < 0 || it->second >= static_cast<int>(m.accessors.size())) continue;
      const tinygltf::Accessor& a = m.accessors[it->second];
      if (a.minValues.size() == 3 && a.maxValues.size() == 3) {
        for (int k = 0; k < 8; ++k) {
          Vec3 c{static_cast<float>((k & 1 ? a.maxValues : a.minValues)[0]),
                 static_cast<float>((k & 2 ? a.maxValues : a.minValues)[1]),
                 static_cast<float>((k & 4 ? a.maxValues : a.minValues)[2])};
          grow(lo, hi, inst.world_from_node.point(c));
        }
      } else {
        std::vector<float> f = read_gltf_floats(m, it->second, 3);
        for (size_t i = 0; i + 2 < f.size(); i += 3) grow(lo, hi, inst.world_from_node.point({f[i], f[i + 1], f[i + 2]}));
      }
      any = true;
    }
  }
  return any && is_finite(lo) && is_finite(hi) && lo.x <= hi.x;
}

// A camera that sees the whole bounding sphere from the front (+Z, glTF's "front"), a little
// from above and to the right, at the default field of view.
CameraKey framing_camera(Vec3 lo, Vec3 hi) {
  Vec3 center = (lo + hi) * 0.5f;
  float radius = std::max(0.5f * length(hi - lo), 1e-3f);
  float distance = radius / std::sin(0.5f * k_default_fov * k_pi_f / 180.0f) * 1.05f;
  CameraKey k;
  k.look_at = center;
  k.position = center + normalize(Vec3{0.35f, 0.3f, 1.0f}) * distance;
  k.up = {0, 1, 0};
  k.fov_degrees = k_default_fov;
  return k;
}

}  // namespace

SceneDesc read_gltf_scene(const std::string& path, const std::vector<std::string>& roots) {
  GltfDocument doc = read_gltf_document(path, roots);
  const tinygltf::Model& m = *doc.model;
  std::vector<GltfNodeInstance> nodes = gltf_scene_nodes(m);
  SceneDesc scene;
  scene.path = path;
  scene.settings.integrator = IntegratorKind::path;
  for (const GltfNodeInstance& inst : nodes) {
    const tinygltf::Node& n = m.nodes[inst.node];
    if (n.camera >= 0) {
      if (n.camera >= static_cast<int>(m.cameras.size())) throw GltfError("node refers to a camera that does not exist");
      scene.cameras.push_back(read_camera(m.cameras[n.camera], n.camera, inst.world_from_node));
    }
    auto ext = n.extensions.find("KHR_lights_punctual");
    if (ext != n.extensions.end() && ext->second.Has("light") && ext->second.Get("light").IsInt()) {
      int l = ext->second.Get("light").GetNumberAsInt();
      if (l < 0 || l >= static_cast<int>(m.lights.size())) throw GltfError("node refers to light " + std::to_string(l) + ", which does not exist");
      scene.lights.push_back(read_light(m.lights[l], l, inst.world_from_node));
    }
  }
  Vec3 lo, hi;
  if (!scene_bounds(m, nodes, lo, hi)) throw GltfError("the default scene contains no meshes");
  if (!scene.cameras.empty()) {
    scene.camera.key = scene.cameras.front().key;
    scene.camera_aspect = scene.cameras.front().aspect_ratio;
  } else {
    scene.camera.key = framing_camera(lo, hi);
    scene.camera_aspect = static_cast<float>(scene.settings.width) / static_cast<float>(scene.settings.height);
    scene.notices.push_back("the glTF file has no camera: using one that frames the whole scene");
  }
  if (scene.camera_aspect > 0) {
    scene.settings.height = std::clamp(static_cast<int>(std::lround(scene.settings.width / scene.camera_aspect)), 1, k_max_image_side);
  }
  // Emissive materials alone rarely light a model (DamagedHelmet's are its display panels),
  // so any file without punctual lights gets the sky; a TOML scene that places the file can
  // set its own [environment] (e.g. black) instead.
  if (scene.lights.empty()) {
    scene.environment.color = Color{1.0f};
    scene.notices.push_back("the glTF file has no lights (KHR_lights_punctual): lighting it with a uniform white "
                            "environment of radiance 1");
  }
  ObjectDesc o;
  o.kind = ShapeKind::mesh;
  o.name = std::filesystem::path(path).filename().string();
  o.path = doc.path;
  o.material = -1;
  o.loc = {path, 0, 0};
  scene.objects.push_back(std::move(o));
  scene.asset_files = doc.referenced_files;
  return scene;
}

}  // namespace rt
