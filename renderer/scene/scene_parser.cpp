// Scene file -> SceneDesc: the top level and every section except objects and prototypes
// (object_parser.cpp). The format is documented in docs/scene-format.md; keep the two in step.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "scene/asset_search.h"
#include "scene/gltf/gltf_scene.h"
#include "scene/mesh_file_check.h"
#include "scene/obj_references.h"
#include "scene/scene_parser_context.h"

namespace rt {

// ---------------------------------------------------------------- shared helpers

int NameTable::add(const TableReader& reader) {
  std::string name = reader.require_string("name", "a unique " + m_noun + " name");
  SourceLoc at = reader.value_loc("name");
  auto it = m_index.find(name);
  if (it != m_index.end())
    reader.doc().fail(at, "duplicate " + m_noun + " " + quote_name(name) + " (first defined at " +
                              m_locs[static_cast<size_t>(it->second)].str() + ")");
  int index = static_cast<int>(m_names.size());
  m_index.emplace(name, index);
  m_names.push_back(std::move(name));
  m_locs.push_back(at);
  return index;
}

int NameTable::find(const std::string& name) const {
  auto it = m_index.find(name);
  return it == m_index.end() ? -1 : it->second;
}

int NameTable::lookup(const TableReader& reader, const std::string& key) const {
  std::string name = reader.get_string(key).value_or("");
  int index = find(name);
  if (index < 0) {
    std::string message = "unknown " + m_noun + " " + quote_name(name) + "; defined: " + join_names(m_names);
    if (auto near = nearest_name(name, m_names)) message += "; did you mean '" + *near + "'?";
    reader.fail_at(key, message);
  }
  return index;
}

ParseContext::ParseContext(const TomlDocument& d, const std::string& scene_path, const AssetSearch& search)
    : doc(d), search_dirs(asset_search_dirs(scene_path, search)) {
  scene.path = scene_path;
}

std::string ParseContext::resolve_asset(const TableReader& reader, const std::string& key, const std::string& noun) {
  std::string written = reader.require_string(key, "the " + noun + "'s path");
  std::optional<std::string> found = find_asset(written, search_dirs);
  if (!found) {
    std::string message = noun + " " + quote_name(written) + " not found";
    if (!std::filesystem::path(written).is_absolute()) message += "; looked in: " + join_names(search_dirs);
    reader.fail_at(key, message);
  }
  // One rule for every command: `farm render` can ship only files under these folders, so
  // `farm single` does not read others either (it did, and render then refused the scene).
  if (std::string why = outside_roots_reason(*found, search_dirs); !why.empty()) {
    reader.fail_at(key, noun + " '" + *found + "' is " + why + ": the farm ships only files under those folders to its workers; add the "
                                           "file's folder with --assets");
  }
  auto& files = scene.asset_files;
  if (std::find(files.begin(), files.end(), *found) == files.end()) files.push_back(*found);
  return *found;
}

void ParseContext::add_mesh_references(const TableReader& reader, const std::string& key,
                                       const std::string& mesh_path) {
  std::vector<std::string> referenced;
  std::string ext = lower_extension(mesh_path);
  try {
    if (ext == ".gltf" || ext == ".glb") {
      referenced = read_gltf_document(mesh_path, search_dirs).referenced_files;
    } else if (ext == ".obj") {
      // The rule read_gltf_document applies: the mesh's folder and the search folders.
      std::vector<std::string> roots = search_dirs;
      roots.push_back(std::filesystem::path(mesh_path).parent_path().string());
      // The roots go in too: an MTL file outside them is refused before it is read (its
      // content could otherwise surface in a parse error).
      for (const FileReference& f : obj_referenced_files(mesh_path, search_dirs, roots)) {
        if (std::string why = outside_roots_reason(f.path, roots); !why.empty()) {
          throw std::runtime_error(f.role + " file '" + f.path + "' is " + why + "; refusing to read it");
        }
        referenced.push_back(f.path);
      }
    }
  } catch (const std::exception& e) {
    reader.fail_at(key, "mesh file " + quote_name(mesh_path) + ": " + e.what());
  }
  auto& files = scene.asset_files;
  for (const std::string& f : referenced)
    if (std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
}

void fail_unknown_kind(const TableReader& reader, const std::string& noun, const std::vector<std::string>& names) {
  std::string type = reader.get_string("type").value_or("");
  std::string message = "unknown " + noun + " type " + quote_name(type);
  if (auto near = nearest_name(type, names)) message += " (did you mean '" + *near + "'?)";
  reader.fail_at("type", message + "; valid types: " + join_names(names));
}

void check_kind_keys(const TableReader& reader, const std::string& noun, const std::string& type,
                     const std::vector<std::string>& allowed,
                     const std::vector<std::pair<std::string, std::vector<std::string>>>& all_kinds) {
  for (const std::string& key : reader.keys_in_file_order()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::vector<std::string> users;
    for (const auto& kind : all_kinds)
      if (std::find(kind.second.begin(), kind.second.end(), key) != kind.second.end()) users.push_back(kind.first);
    if (!users.empty())
      reader.doc().fail(reader.key_loc(key), quote_name(key) + " does not apply to " + noun + " type '" + type + "'" +
                                                 " (it is for: " + join_names(users) + ")");
  }
  reader.check_keys(allowed);
}

std::vector<const toml::value*> tables_in(const TableReader& parent, const std::string& key, const std::string& header) {
  std::vector<const toml::value*> out;
  const toml::value* v = parent.find(key);
  if (!v) return out;
  if (!v->is_array())
    parent.fail_at(key, quote_name(key) + " must be an array of tables (write " + header + " sections), got " +
                            describe_value(*v));
  for (const toml::value& e : v->as_array()) {
    if (!e.is_table())
      parent.doc().fail(parent.doc().loc(e), quote_name(key) + " must be an array of tables (write " + header +
                                                  " sections), got " + describe_value(e) + " in it");
    out.push_back(&e);
  }
  return out;
}

namespace {

const NumRange k_unit = NumRange::closed(0, 1);  // reflectances
const NumRange k_non_negative = NumRange::at_least(0);

// ---------------------------------------------------------------- [render]

void read_render(ParseContext& ctx, const TableReader& r) {
  r.check_keys({"width", "height", "spp", "integrator", "max_depth", "seed", "frames", "ambient", "max_sample_value",
                "filter", "filter_width", "noise_threshold", "min_samples", "passes"});
  RenderSettings& s = ctx.scene.settings;
  s.width = static_cast<int>(r.get_int("width", s.width, 1, k_max_image_side));
  s.height = static_cast<int>(r.get_int("height", s.height, 1, k_max_image_side));
  if (int64_t{s.width} * s.height > k_max_image_pixels)
    r.fail_at(r.has("height") ? "height" : "width",
              "width * height must be at most " + std::to_string(k_max_image_pixels) + " pixels, got " +
                  std::to_string(int64_t{s.width} * s.height));
  s.spp = static_cast<int>(r.get_int("spp", s.spp, 1, k_max_spp));
  if (auto integrator = r.get_string("integrator")) {
    if (std::optional<IntegratorKind> kind = parse_integrator(*integrator))
      s.integrator = *kind;
    else
      r.fail_at("integrator", "unknown integrator " + quote_name(*integrator) + "; valid: whitted, path");
  }
  s.max_depth = static_cast<int>(r.get_int("max_depth", s.max_depth, 0, k_max_bounces));
  s.seed = static_cast<uint64_t>(r.get_int("seed", 0, 0, std::numeric_limits<int64_t>::max()));
  s.frames = static_cast<int>(r.get_int("frames", s.frames, 1, k_max_frames));
  s.ambient = r.get_color("ambient", s.ambient, k_non_negative);
  s.max_sample_value = r.get_float("max_sample_value", s.max_sample_value, k_non_negative);
  if (auto filter = r.get_string("filter")) {
    if (*filter == "box") {
      s.filter = PixelFilter::box;
      s.filter_width = 1.0f;
    } else if (*filter == "gaussian") {
      s.filter = PixelFilter::gaussian;
      s.filter_width = 1.5f;
    } else if (*filter == "blackman-harris") {
      s.filter = PixelFilter::blackman_harris;
      s.filter_width = 3.0f;  // Cycles' default ("width 1.5" there is half the support)
    } else {
      r.fail_at("filter", "unknown pixel filter " + quote_name(*filter) + "; valid: box, gaussian, blackman-harris");
    }
  }
  s.filter_width = r.get_float("filter_width", s.filter_width, NumRange::closed(0.5, 6));
  s.noise_threshold = r.get_float("noise_threshold", s.noise_threshold, NumRange::closed(0, 1));
  s.min_samples = static_cast<int>(r.get_int("min_samples", s.min_samples, 0, k_max_spp));
  if (auto passes = r.get_string("passes")) {
    std::string error;
    if (std::optional<PassSet> set = parse_pass_list(*passes, error))
      s.passes = *set;
    else
      r.fail_at("passes", error);
  }
}

// ---------------------------------------------------------------- [camera]

const std::vector<std::string> k_camera_keys = {"position", "look_at", "up", "fov", "aperture", "focus_distance"};

// Keys absent from `r` keep their value from `base`.
CameraKey read_camera_key(const TableReader& r, const CameraKey& base) {
  CameraKey k = base;  // keys not written keep the base (e.g. an imported orthographic camera)
  k.position = r.get_vec3("position", base.position);
  k.look_at = r.get_vec3("look_at", base.look_at);
  k.up = r.get_vec3("up", base.up);
  k.fov_degrees = r.get_float("fov", base.fov_degrees, NumRange{0, 180, true, true});
  k.aperture = r.get_float("aperture", base.aperture, k_non_negative);
  k.focus_distance = r.get_float("focus_distance", base.focus_distance, k_non_negative);
  Vec3 view = k.look_at - k.position;
  if (!(length(view) > 0)) r.fail_at("look_at", "camera 'look_at' must differ from 'position'");
  if (!(length(cross(normalize(view), k.up)) > 1e-6f * length(k.up)) || !(length(k.up) > 0))
    r.fail_at("up", "camera 'up' must be non-zero and not parallel to the view direction (look_at - position)");
  return k;
}

void read_camera(ParseContext& ctx, const TableReader& r) {
  std::vector<std::string> allowed = k_camera_keys;
  allowed.push_back("keyframe");
  r.check_keys(allowed);
  CameraDesc& camera = ctx.scene.camera;
  camera.key = read_camera_key(r, camera.key);
  const int frames = ctx.scene.settings.frames;
  for (const toml::value* t : tables_in(r, "keyframe", "[[camera.keyframe]]")) {
    TableReader k(ctx.doc, *t, "[[camera.keyframe]]");
    allowed = k_camera_keys;
    allowed.push_back("frame");
    k.check_keys(allowed);
    if (!k.has("frame")) k.fail("[[camera.keyframe]] needs 'frame' (a frame number in 1..[render] frames)");
    CameraKeyframe kf;
    kf.frame = static_cast<int>(k.get_int("frame", 1, 1, frames));
    if (!camera.keyframes.empty() && kf.frame <= camera.keyframes.back().frame)
      k.fail_at("frame", "keyframe frames must be strictly increasing: frame " + std::to_string(kf.frame) +
                             " follows frame " + std::to_string(camera.keyframes.back().frame));
    kf.key = read_camera_key(k, camera.key);
    camera.keyframes.push_back(kf);
  }
}

// ---------------------------------------------------------------- [environment]

void read_environment(ParseContext& ctx, const TableReader& r) {
  r.check_keys({"color", "image", "strength", "rotation"});
  EnvironmentDesc& e = ctx.scene.environment;
  e.color = r.get_color("color", e.color, k_non_negative);
  if (r.has("image")) e.image_path = ctx.resolve_asset(r, "image", "environment image");
  e.strength = r.get_float("strength", e.strength, k_non_negative);
  e.rotation_degrees = r.get_float("rotation", e.rotation_degrees);
}

// ---------------------------------------------------------------- [[texture]]

void read_texture(ParseContext& ctx, const TableReader& r) {
  static const std::vector<KindKeys<TextureKind>> kinds = {
      {"checker", TextureKind::checker, {"even", "odd", "scale"}},
      {"image", TextureKind::image, {"path", "scale"}},
  };
  TextureDesc t;
  t.kind = read_kind(r, kinds, {"name", "type"}, "texture").kind;
  ctx.textures.add(r);
  t.name = ctx.textures.names().back();
  t.loc = r.loc();
  t.even = r.get_color("even", t.even, k_unit);
  t.odd = r.get_color("odd", t.odd, k_unit);
  t.scale = r.get_float("scale", t.scale, NumRange::above(0));
  if (t.kind == TextureKind::image) t.path = ctx.resolve_asset(r, "path", "texture image");
  ctx.scene.textures.push_back(std::move(t));
}

// ---------------------------------------------------------------- [[material]]

void read_material(ParseContext& ctx, const TableReader& r) {
  static const std::vector<KindKeys<MaterialKind>> kinds = {
      {"diffuse", MaterialKind::diffuse, {"albedo"}},
      {"plastic", MaterialKind::plastic, {"albedo", "specular", "roughness"}},
      {"mirror", MaterialKind::mirror, {"albedo"}},
      {"glass", MaterialKind::glass, {"albedo", "ior"}},
      {"metal", MaterialKind::metal, {"albedo", "roughness"}},
      {"emissive", MaterialKind::emissive, {"emission", "two_sided"}},
  };
  MaterialDesc m;
  m.kind = read_kind(r, kinds, {"name", "type"}, "material").kind;
  ctx.materials.add(r);
  m.name = ctx.materials.names().back();
  m.loc = r.loc();
  // Clear glass and perfect mirrors by default; diffuse-like materials default to 0.8 grey.
  if (m.kind == MaterialKind::glass || m.kind == MaterialKind::mirror) m.albedo.value = Color{1.0f};
  if (const toml::value* albedo = r.find("albedo"); albedo && albedo->is_string()) {
    m.albedo.texture = ctx.textures.lookup(r, "albedo");
    m.albedo.value = Color{1.0f};  // the texture alone gives the colour
  } else if (albedo && !albedo->is_integer() && !albedo->is_floating() && !albedo->is_array()) {
    r.fail_at("albedo", "'albedo' must be a colour (a number or [r, g, b]) or a texture name, got " +
                            describe_value(*albedo));
  } else {
    m.albedo.value = r.get_color("albedo", m.albedo.value, k_unit);
  }
  m.specular = r.get_color("specular", m.specular, k_unit);
  m.roughness = r.get_float("roughness", m.roughness, NumRange::closed(0.001, 1));
  m.ior = r.get_float("ior", m.ior, NumRange{1, 4, true, false});
  m.emission = r.get_color("emission", m.emission, k_non_negative);
  m.two_sided = r.get_bool("two_sided", m.two_sided);
  ctx.scene.materials.push_back(std::move(m));
}

// ---------------------------------------------------------------- [[light]]

void read_light(ParseContext& ctx, const TableReader& r) {
  static const std::vector<KindKeys<LightKind>> kinds = {
      {"point", LightKind::point, {"position", "intensity"}},
      {"spot", LightKind::spot, {"position", "direction", "intensity", "cone", "falloff"}},
      {"directional", LightKind::directional, {"direction", "intensity"}},
  };
  LightDesc l;
  l.kind = read_kind(r, kinds, {"type"}, "light").kind;
  l.loc = r.loc();
  l.position = r.get_vec3("position", l.position);
  l.direction = r.get_vec3("direction", l.direction);
  if (!(length(l.direction) > 0)) r.fail_at("direction", "'direction' must not be [0, 0, 0]");
  l.direction = normalize(l.direction);
  l.intensity = r.get_color("intensity", l.intensity, k_non_negative);
  l.cone_degrees = r.get_float("cone", l.cone_degrees, NumRange::closed(0, 180));
  l.falloff_degrees = r.get_float("falloff", l.falloff_degrees, NumRange::closed(0, 180));
  if (l.cone_degrees + l.falloff_degrees > 180)
    r.fail_at(r.has("falloff") ? "falloff" : "cone", "'cone' + 'falloff' must be at most 180 degrees");
  ctx.scene.lights.push_back(l);
}

// ---------------------------------------------------------------- [import]

// A glTF scene to start from: its geometry and materials, its cameras (the first, or
// `camera`) and, unless `lights = false`, its lights. Later sections adjust it: [camera] keys
// change the imported camera, [environment] replaces the default sky, [[light]] and
// [[object]] add to it.
void read_import(ParseContext& ctx, const TableReader& r) {
  r.check_keys({"path", "camera", "lights"});
  std::string path = ctx.resolve_asset(r, "path", "glTF scene");
  std::string ext = lower_extension(path);
  if (ext != ".gltf" && ext != ".glb") r.fail_at("path", "[import] reads glTF scenes (.gltf or .glb), got " + quote_name(path));
  SceneDesc imported;
  try {
    imported = read_gltf_scene(path, ctx.search_dirs);
    if (r.has("camera")) use_camera(imported, r.require_string("camera", "a camera's name or index"));
  } catch (const std::exception& e) {
    r.fail_at(r.has("camera") && std::string(e.what()).find("no camera") != std::string::npos ? "camera" : "path",
              quote_name(path) + ": " + e.what());
  }
  SceneDesc& scene = ctx.scene;
  scene.camera = imported.camera;
  scene.cameras = imported.cameras;
  scene.camera_aspect = imported.camera_aspect;
  if (r.get_bool("lights", true)) scene.lights = imported.lights;
  scene.objects = imported.objects;
  for (const std::string& f : imported.asset_files)
    if (std::find(scene.asset_files.begin(), scene.asset_files.end(), f) == scene.asset_files.end()) scene.asset_files.push_back(f);
  for (const std::string& n : imported.notices)
    if (n.find("no lights") == std::string::npos) scene.notices.push_back(n);
}

// ---------------------------------------------------------------- top level

SceneDesc parse_document(const TomlDocument& doc, const std::string& path, const AssetSearch& search) {
  ParseContext ctx(doc, path, search);
  TableReader root(doc, doc.root(), "the top level");
  root.check_keys({"import", "render", "camera", "environment", "texture", "material", "light", "prototype", "object"});
  // Sections are read in dependency order (an import first, render before camera keyframes,
  // textures before materials before objects), whatever their order in the file.
  if (const toml::value* v = root.find("import")) read_import(ctx, TableReader(doc, *v, "[import]"));
  if (const toml::value* v = root.find("render")) read_render(ctx, TableReader(doc, *v, "[render]"));
  if (const toml::value* v = root.find("camera")) read_camera(ctx, TableReader(doc, *v, "[camera]"));
  if (const toml::value* v = root.find("environment")) read_environment(ctx, TableReader(doc, *v, "[environment]"));
  for (const toml::value* t : tables_in(root, "texture", "[[texture]]"))
    read_texture(ctx, TableReader(doc, *t, "[[texture]]"));
  for (const toml::value* t : tables_in(root, "material", "[[material]]"))
    read_material(ctx, TableReader(doc, *t, "[[material]]"));
  for (const toml::value* t : tables_in(root, "light", "[[light]]")) read_light(ctx, TableReader(doc, *t, "[[light]]"));
  read_prototypes(ctx, root);
  read_objects(ctx, root);
  if (root.has("import") && !root.has("environment") && ctx.scene.lights.empty()) {
    ctx.scene.environment.color = Color{1.0f};  // as for the glTF file alone
    ctx.scene.notices.push_back("no lights: lighting the imported glTF scene with a uniform white environment");
  }
  return std::move(ctx.scene);
}

}  // namespace

SceneDesc parse_scene_string(const std::string& text, const std::string& virtual_path, const AssetSearch& search) {
  TomlDocument doc(text, virtual_path);
  return parse_document(doc, virtual_path, search);
}

SceneDesc parse_scene_file(const std::string& path, const AssetSearch& search) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw SceneError("cannot open scene file '" + path + "' (it is a folder)");
  std::string ext = lower_extension(path);
  if (ext == ".gltf" || ext == ".glb") {
    try {
      return read_gltf_scene(path, asset_search_dirs(path, search));
    } catch (const SceneError&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw SceneError(path + ": out of memory reading the glTF file");
    } catch (const std::exception& e) {
      throw SceneError(path + ": " + e.what());
    }
  }
  if (ext == ".obj" || ext == ".ply" || ext == ".fbx" || ext == ".mtl") {
    // Unlike glTF, these carry no camera or lights; reading them as TOML would only report a
    // baffling syntax error on their first line.
    throw SceneError("'" + path + "' is a mesh file, not a scene: place it in a TOML scene ([[object]] type = \"mesh\", "
                     "path = \"" + std::filesystem::path(path).filename().string() +
                     "\"; see docs/real-scenes.md), or render a .gltf/.glb file directly");
  }
  // stat() before opening: a FIFO or device would block the read forever.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw SceneError("cannot open scene file '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) throw SceneError("scene file '" + path + "' is not a regular file (a FIFO, device or socket)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SceneError("cannot open scene file '" + path + "': " + std::strerror(errno));
  // Read in chunks up to one byte past the limit: a huge file (or an endless pipe) is
  // refused by TomlDocument without being loaded whole.
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= k_max_scene_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) throw SceneError("cannot read scene file '" + path + "'");
  return parse_scene_string(text, path, search);
}

}  // namespace rt
