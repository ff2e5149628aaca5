// [[object]] and [[prototype]] sections: shapes, their placement and their materials.
#include <cmath>

#include "scene/scene_parser_context.h"

namespace rt {

namespace {

// "plane" is not a ShapeKind of its own: it becomes a quad of side `size` around a point.
enum class ObjectType { sphere, quad, plane, box, cylinder, lathe, mesh, instance };

const std::vector<KindKeys<ObjectType>>& object_kinds() {
  static const std::vector<KindKeys<ObjectType>> kinds = {
      {"sphere", ObjectType::sphere, {"material", "center", "radius"}},
      {"quad", ObjectType::quad, {"material", "corner", "edge_u", "edge_v"}},
      {"plane", ObjectType::plane, {"material", "point", "center", "normal", "size"}},
      {"box", ObjectType::box, {"material", "min", "max"}},
      {"cylinder", ObjectType::cylinder, {"material", "radius", "height", "segments"}},
      {"lathe", ObjectType::lathe, {"material", "profile", "segments", "smooth"}},
      {"mesh", ObjectType::mesh, {"material", "path", "smooth"}},
      {"instance", ObjectType::instance, {"prototype", "material"}},
  };
  return kinds;
}

const std::vector<std::string> k_common_object_keys = {"name", "type", "translate", "rotate", "scale"};
constexpr int64_t k_max_segments = 4096;
constexpr size_t k_max_profile_points = 65536;

// world_from_object = translate * rotZ * rotY * rotX * scale: scale first, then rotate
// about X, Y and Z (fixed axes, degrees), then move.
Transform read_transform(const TableReader& r) {
  Vec3 t = r.get_vec3("translate", Vec3(0.0f));
  Vec3 angles = r.get_vec3("rotate", Vec3(0.0f));
  Vec3 s(1.0f);
  if (const toml::value* v = r.find("scale")) {
    s = (v->is_integer() || v->is_floating()) ? Vec3(r.to_float(*v, "'scale'")) : r.to_vec3(*v, "'scale'");
    if (s.x == 0 || s.y == 0 || s.z == 0) r.fail_at("scale", "'scale' must not be zero in any component");
  }
  return translate(t) * rotate_degrees({0, 0, 1}, angles.z) * rotate_degrees({0, 1, 0}, angles.y) *
         rotate_degrees({1, 0, 0}, angles.x) * scale(s);
}

void read_material_ref(ParseContext& ctx, const TableReader& r, ObjectDesc& o, bool required) {
  if (r.has("material")) {
    o.material = ctx.materials.lookup(r, "material");
  } else if (required) {
    r.fail(r.what() + " needs 'material' (defined: " + join_names(ctx.materials.names()) + ")");
  }
}

// A quad of side `size` centred on `point`, with cross(edge_u, edge_v) along `normal` (the
// quad's front face). For the default normal +Y the edges run along +Z and +X.
void make_plane(const TableReader& r, ObjectDesc& o) {
  if (r.has("point") && r.has("center")) r.fail_at("center", "give either 'point' or 'center', not both");
  Vec3 point = r.get_vec3(r.has("center") ? "center" : "point", Vec3(0.0f));
  Vec3 n = r.get_vec3("normal", {0, 1, 0});
  if (!(length(n) > 0)) r.fail_at("normal", "'normal' must not be [0, 0, 0]");
  n = normalize(n);
  float size = r.get_float("size", 1000.0f, NumRange::above(0));
  Vec3 helper = std::abs(n.x) > 0.9f ? Vec3{0, 1, 0} : Vec3{1, 0, 0};
  Vec3 u = normalize(cross(helper, n));
  Vec3 v = cross(n, u);
  o.kind = ShapeKind::quad;
  o.edge_u = u * size;
  o.edge_v = v * size;
  o.corner = point - (o.edge_u + o.edge_v) * 0.5f;
}

std::vector<Vec2> read_profile(const TableReader& r) {
  const toml::value* v = r.find("profile");
  if (!v) r.fail(r.what() + " of type lathe needs 'profile' (an array of [r, y] points)");
  const std::string expected = "'profile' must be an array of at least 2 [r, y] points, got ";
  if (!v->is_array() || v->as_array().size() < 2) r.fail_at("profile", expected + describe_value(*v));
  if (v->as_array().size() > k_max_profile_points)
    r.fail_at("profile", "'profile' may have at most " + std::to_string(k_max_profile_points) + " points");
  std::vector<Vec2> profile;
  for (const toml::value& p : v->as_array()) {
    std::string which = "'profile' point " + std::to_string(profile.size() + 1);
    if (!p.is_array() || p.as_array().size() != 2)
      r.doc().fail(r.doc().loc(p), which + ": expected [r, y] (2 numbers), got " + describe_value(p));
    float radius = r.to_float(p.as_array()[0], which + " radius", NumRange::at_least(0));
    float y = r.to_float(p.as_array()[1], which + " y");
    profile.push_back({radius, y});
  }
  return profile;
}

ObjectDesc read_object(ParseContext& ctx, const TableReader& r, bool in_prototype) {
  const KindKeys<ObjectType>& kind = read_kind(r, object_kinds(), k_common_object_keys, "object");
  if (in_prototype && kind.kind == ObjectType::instance)
    r.fail_at("type", "a prototype cannot contain instances");
  ObjectDesc o;
  o.loc = r.loc();
  o.name = r.get_string("name").value_or("");
  o.world_from_object = read_transform(r);
  switch (kind.kind) {
    case ObjectType::sphere:
      o.kind = ShapeKind::sphere;
      o.center = r.get_vec3("center", o.center);
      o.radius = r.get_float("radius", o.radius, NumRange::above(0));
      break;
    case ObjectType::quad:
      o.kind = ShapeKind::quad;
      o.corner = r.get_vec3("corner", o.corner);
      o.edge_u = r.get_vec3("edge_u", o.edge_u);
      o.edge_v = r.get_vec3("edge_v", o.edge_v);
      if (!(length(cross(o.edge_u, o.edge_v)) > 0))
        r.fail_at(r.has("edge_v") ? "edge_v" : "edge_u", "'edge_u' and 'edge_v' must be non-zero and not parallel");
      break;
    case ObjectType::plane:
      make_plane(r, o);
      break;
    case ObjectType::box:
      o.kind = ShapeKind::box;
      o.box_min = r.get_vec3("min", o.box_min);
      o.box_max = r.get_vec3("max", o.box_max);
      if (!(o.box_min.x < o.box_max.x && o.box_min.y < o.box_max.y && o.box_min.z < o.box_max.z))
        r.fail_at(r.has("max") ? "max" : "min", "box 'max' must be greater than 'min' in every component");
      break;
    case ObjectType::cylinder:
      o.kind = ShapeKind::cylinder;
      o.radius = r.get_float("radius", o.radius, NumRange::above(0));
      o.height = r.get_float("height", o.height, NumRange::above(0));
      o.segments = static_cast<int>(r.get_int("segments", o.segments, 3, k_max_segments));
      break;
    case ObjectType::lathe:
      o.kind = ShapeKind::lathe;
      o.profile = read_profile(r);
      o.segments = static_cast<int>(r.get_int("segments", o.segments, 3, k_max_segments));
      o.smooth = r.get_bool("smooth", o.smooth);
      break;
    case ObjectType::mesh:
      o.kind = ShapeKind::mesh;
      o.path = ctx.resolve_asset(r, "path", "mesh file");
      ctx.add_mesh_references(r, "path", o.path);
      o.smooth = r.get_bool("smooth", o.smooth);
      break;
    case ObjectType::instance:
      o.kind = ShapeKind::instance;
      if (!r.has("prototype"))
        r.fail(r.what() + " of type instance needs 'prototype' (defined: " + join_names(ctx.prototypes.names()) + ")");
      o.prototype = ctx.prototypes.lookup(r, "prototype");
      break;
  }
  // Meshes may keep their file's materials; an instance's optional material replaces every
  // material inside its prototype.
  read_material_ref(ctx, r, o, kind.kind != ObjectType::mesh && kind.kind != ObjectType::instance);
  return o;
}

}  // namespace

void read_prototypes(ParseContext& ctx, const TableReader& root) {
  for (const toml::value* t : tables_in(root, "prototype", "[[prototype]]")) {
    TableReader r(ctx.doc, *t, "[[prototype]]");
    r.check_keys({"name", "object"});
    PrototypeDesc p;
    ctx.prototypes.add(r);
    p.name = ctx.prototypes.names().back();
    p.loc = r.loc();
    for (const toml::value* o : tables_in(r, "object", "[[prototype.object]]"))
      p.objects.push_back(read_object(ctx, TableReader(ctx.doc, *o, "[[prototype.object]]"), true));
    if (p.objects.empty())
      r.fail("prototype " + quote_name(p.name) + " has no objects; add [[prototype.object]] sections after it");
    ctx.scene.prototypes.push_back(std::move(p));
  }
}

void read_objects(ParseContext& ctx, const TableReader& root) {
  for (const toml::value* t : tables_in(root, "object", "[[object]]"))
    ctx.scene.objects.push_back(read_object(ctx, TableReader(ctx.doc, *t, "[[object]]"), false));
}

}  // namespace rt
