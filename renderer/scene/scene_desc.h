// The scene as written in a scene file: plain data, cheap to produce (no meshes or images
// are read). `parse_scene_file` fills it; `load_scene` turns it into something renderable.
// A master can read resolution and frame count from here without touching any asset.
//
// Units: distances in scene units, angles in degrees, colours linear RGB, light intensities
// in radiometric units (point/spot: W/sr, directional: W/m^2, emission: W/(m^2 sr)).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "math/transform.h"
#include "math/vec.h"
#include "scene/render_settings.h"

namespace rt {

// Where something was written, for error messages ("scene.toml:14:12").
struct SourceLoc {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based; 0 = unknown
  std::string str() const;
  // "file:line:column: " to put before a message, or "" when the place is unknown.
  std::string prefix() const { return file.empty() ? "" : str() + ": "; }
};

// A user error in a scene, mesh or texture; the message already names the location.
class SceneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};




struct CameraKey {
  Vec3 position{0, 0, 5};
  Vec3 look_at{0, 0, 0};
  Vec3 up{0, 1, 0};
  float fov_degrees = 45.0f;   // vertical field of view
  float aperture = 0.0f;       // lens diameter; 0 = pinhole (no focal blur)
  float focus_distance = 0.0f; // 0 = distance from position to look_at
  float ortho_height = 0.0f;   // > 0: orthographic, the view's height in scene units (fov unused)
};

struct CameraKeyframe {
  int frame = 1;
  CameraKey key;
};

struct CameraDesc {
  CameraKey key;                        // used when there are no keyframes
  std::vector<CameraKeyframe> keyframes;  // sorted by frame; linear in between, held outside
  CameraKey at_frame(int frame) const;
};

enum class TextureKind { checker, image };
enum class TextureWrap { repeat, clamp, mirror };

struct TextureDesc {
  std::string name;
  TextureKind kind = TextureKind::checker;
  Color even{1.0f}, odd{0.0f};  // checker colours
  float scale = 1.0f;           // checker: squares per scene unit; image: uv repeats
  std::string path;             // image: resolved absolute path
  TextureWrap wrap_s = TextureWrap::repeat, wrap_t = TextureWrap::repeat;  // image (glTF samplers)
  SourceLoc loc;                // where it was named (scene line, or the mesh/glTF file)
};

// KHR_texture_transform: uv' = m * (u, v, 1), in glTF's uv convention (v down the image).
struct UvTransform {
  float m[2][3] = {{1, 0, 0}, {0, 1, 0}};
  bool is_identity = true;
};

// Where a material reads a texture: which one, with which uv set and transform.
struct TextureRef {
  int texture = -1;  // index into the scene's textures (a mesh file's own list before loading)
  int uv_set = 0;    // 0 or 1 (TEXCOORD_0 / TEXCOORD_1)
  UvTransform transform;
  bool valid() const { return texture >= 0; }
};

// A colour that may come from a texture: value, times the texture when there is one
// (a scene file's `albedo = "checks"` gives value 1).
struct ColorParam : TextureRef {
  Color value{0.8f};
};

// diffuse, plastic, mirror, glass, metal, emissive: the scene format's kinds. pbr: glTF's
// metallic-roughness model (diffuse = base * (1 - metallic) under a coat whose reflectance at
// normal incidence is mix(0.04, base, metallic)); it is resolved per hit into a plastic.
enum class MaterialKind { diffuse, plastic, mirror, glass, metal, emissive, pbr };

// glTF alphaMode; an MTL map_d or `d` < 1 gives `mask` with cutoff 0.5 / `blend`.
enum class AlphaMode { opaque, mask, blend };

struct MaterialDesc {
  std::string name;
  MaterialKind kind = MaterialKind::diffuse;
  ColorParam albedo;            // diffuse colour; mirror/metal reflectance; glass transmission tint
  Color specular{0.04f};        // plastic: specular reflectance at normal incidence
  float roughness = 0.2f;       // plastic/metal/pbr: GGX alpha = roughness^2; in [0.001, 1]
  float ior = 1.5f;             // glass: index of refraction
  Color emission{0.0f};         // radiance leaving the front face (any kind; emissive: only that)
  bool two_sided = false;       // emit from both faces
  // Textures of real scene files (glTF, MTL); none by default.
  float metallic = 0.0f;        // pbr
  TextureRef metallic_roughness;  // pbr: G = roughness, B = metallic (linear), times the factors
  TextureRef normal_map;        // tangent space, +Y up (glTF); xy scaled by normal_scale
  float normal_scale = 1.0f;
  TextureRef bump_map;          // height map (MTL bump); bump_scale = height of white in uv units
  float bump_scale = 0.004f;
  TextureRef emission_map;      // multiplies `emission` (sRGB colour)
  AlphaMode alpha_mode = AlphaMode::opaque;
  float alpha = 1.0f;           // times the opacity texture's channel
  float alpha_cutoff = 0.5f;    // mask: opaque where alpha >= cutoff
  TextureRef opacity_map;       // glTF: the base colour texture; MTL: map_d
  int opacity_channel = 3;      // which channel of opacity_map is alpha (0 for grey maps)
  bool vertex_colors = false;   // multiply albedo by the mesh's vertex colours (glTF COLOR_0, PLY)
  SourceLoc loc;
};

// The material emits light (from a constant or a texture).
inline bool has_emission(const MaterialDesc& m) {
  return m.emission.x > 0 || m.emission.y > 0 || m.emission.z > 0;
}

enum class LightKind { point, spot, directional };

struct LightDesc {
  LightKind kind = LightKind::point;
  Vec3 position{0, 10, 0};
  Vec3 direction{0, -1, 0};  // spot: axis; directional: direction light travels
  Color intensity{1.0f};     // point/spot: W/sr; directional: irradiance W/m^2
  float cone_degrees = 30;   // spot: full-intensity half angle
  float falloff_degrees = 5; // spot: extra angle over which it fades to zero
  SourceLoc loc;
};

struct EnvironmentDesc {
  Color color{0.0f};        // uniform radiance (used when no image)
  std::string image_path;   // optional lat-long image, resolved absolute path
  float strength = 1.0f;    // multiplies colour or image
  float rotation_degrees = 0; // about +Y
};

enum class ShapeKind { sphere, quad, box, cylinder, lathe, mesh, instance };

struct ObjectDesc {
  std::string name;                 // optional
  ShapeKind kind = ShapeKind::sphere;
  int material = -1;                // index into SceneDesc::materials; mesh: -1 = file's materials
  Transform world_from_object;      // translate * rotate * scale from the file
  // sphere
  Vec3 center{0.0f};
  float radius = 1.0f;
  // quad: corner + edge_u + edge_v (a plane is a large quad)
  Vec3 corner{-1, 0, -1}, edge_u{2, 0, 0}, edge_v{0, 0, 2};
  // box
  Vec3 box_min{-1.0f}, box_max{1.0f};
  // cylinder: from base to base + (0, height, 0) in object space, capped
  float height = 1.0f;
  // lathe: profile of (radius, y) points revolved about +Y
  std::vector<Vec2> profile;
  int segments = 48;                // cylinder/lathe: subdivisions around the axis
  bool smooth = true;               // lathe/mesh: interpolate normals
  // mesh
  std::string path;                 // resolved absolute path
  // instance
  int prototype = -1;               // index into SceneDesc::prototypes
  SourceLoc loc;
};

// A named group of objects placed several times by `instance` objects (Embree instancing).
struct PrototypeDesc {
  std::string name;
  std::vector<ObjectDesc> objects;  // no instances inside prototypes
  SourceLoc loc;
};

// A camera a scene file defines by name (glTF), to choose with use_camera().
struct NamedCamera {
  std::string name;
  CameraKey key;
  float aspect_ratio = 0;  // width / height the camera was made for; 0 = not given
};

struct SceneDesc {
  std::string path;                 // the scene file as given
  RenderSettings settings;
  CameraDesc camera;
  std::vector<TextureDesc> textures;
  std::vector<MaterialDesc> materials;
  std::vector<LightDesc> lights;
  EnvironmentDesc environment;
  std::vector<PrototypeDesc> prototypes;
  std::vector<ObjectDesc> objects;
  std::vector<std::string> asset_files;  // every file the scene reads, resolved, for shipping
  std::vector<NamedCamera> cameras;      // a glTF scene's cameras, in file order
  float camera_aspect = 0;               // width / height of the camera in use; 0 = not given
  std::vector<std::string> notices;      // one-line remarks for the user (defaults applied, ...)
  // A scene of another renderer (.pov, .blend): the options the farm settled for it when reading
  // the scene, in that renderer's words; they travel with the job (farm/backend).
  std::vector<std::string> backend_options;
  // A scene of another renderer whose output is one multi-layer EXR (a .blend set to OpenEXR
  // MultiLayer): its channels in the farm's order, the colour's R, G, B first. Our renderer's
  // follow from settings.passes instead.
  std::vector<std::string> output_channels;
  // Text the output file carries with them (a .blend's Cryptomatte names and manifests).
  std::vector<std::pair<std::string, std::string>> output_attributes;
};

// Where relative asset paths are looked up: the scene file's folder first, then each of
// these in order, then each entry of $FARM_ASSETS (colon-separated).
struct AssetSearch {
  std::vector<std::string> dirs;
};

// Makes the camera named `which` (a name, or an index into `cameras` counting from 0) the
// one in use. Throws SceneError listing the cameras when there is no such camera.
void use_camera(SceneDesc& scene, const std::string& which);

// Parses and validates a scene file (TOML, or a glTF 2.0 .gltf/.glb file used whole). Throws SceneError naming file:line:column on any problem
// (syntax, unknown key with the nearest valid one, wrong type, out-of-range value, unknown
// material/texture/prototype with the defined names, missing asset file with where it looked).
SceneDesc parse_scene_file(const std::string& path, const AssetSearch& search = {});
SceneDesc parse_scene_string(const std::string& text, const std::string& virtual_path,
                             const AssetSearch& search = {});

}  // namespace rt
