// load_mesh_file: OBJ/PLY/glTF/GLB/FBX through assimp, hardened for files we did not write.
//
// Assimp picks an importer by extension but falls back to sniffing every one of its ~60
// importers when that fails, so a hostile ".ply" can end up in any parser it ships. We check
// the content ourselves first, then leave the importer with only the parsers for that format,
// and give it an IO system that opens only regular files of bounded size.
#include "mesh/mesh.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <sys/stat.h>

#include <assimp/BaseImporter.h>
#include <assimp/DefaultIOSystem.h>
#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/importerdesc.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include "mesh/gltf_loader.h"
#include "scene/mesh_file_check.h"
#include "mesh/mesh_materials.h"
#include "mesh/mesh_textures.h"

// Debian builds assimp without NDEBUG, so its ai_assert is live and the default handler calls
// abort(): a malformed file (a mutated BoxTextured.glb trips one in TriangulateProcess) would
// kill the whole render node. The library calls this exported function through its PLT, so
// this definition takes precedence over the library's; throwing turns the failed check into
// an ordinary import error. (AssertHandler.h, the proper way to set a handler, is not installed,
// and DeadlyImportError's constructor is not exported, hence std::runtime_error.)
namespace {
// Post-processing failures reach us without assimp's error string; this keeps the reason.
thread_local std::string last_assimp_assert;
}  // namespace

namespace Assimp {
void aiAssertViolation(const char* expression, const char* file, int line) {
  last_assimp_assert =
      std::string("assimp internal check failed: ") + expression + " (" + file + ":" + std::to_string(line) + ")";
  throw std::runtime_error(last_assimp_assert);
}
}  // namespace Assimp

namespace rt {

namespace {

constexpr uint64_t k_max_file_bytes = k_max_mesh_file_bytes;

// Thrown inside the loader with the reason only; load_mesh_file adds location and path.
struct LoadFailure {
  std::string reason;
};

[[noreturn]] void fail(std::string reason) { throw LoadFailure{std::move(reason)}; }

// ---------------------------------------------------------------------------------------------
// Assimp set-up

// Refuses writes, devices, FIFOs and oversized files, whoever asks (an MTL path, a glTF
// buffer URI such as "/dev/zero"); importers treat a failed Open like a missing file.
class GuardedIOSystem : public Assimp::DefaultIOSystem {
 public:
  using Assimp::DefaultIOSystem::Open;
  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (!file || !mode || std::strpbrk(mode, "wa+")) return nullptr;
    struct stat st {};
    if (::stat(file, &st) != 0 || !S_ISREG(st.st_mode)) return nullptr;
    if (static_cast<uint64_t>(st.st_size) > k_max_file_bytes) return nullptr;
    return Assimp::DefaultIOSystem::Open(file, mode);
  }
};

bool importer_claims(const aiImporterDesc* desc, const std::string& ext_without_dot) {
  if (!desc || !desc->mFileExtensions) return false;
  std::string list = std::string(" ") + desc->mFileExtensions + " ";
  return list.find(" " + ext_without_dot + " ") != std::string::npos;
}

// Leaves only the importers that claim this extension (glTF: both the 1.0 and 2.0 readers),
// so assimp's signature fallback cannot hand the file to some other parser.
void restrict_importers(Assimp::Importer& importer, const std::string& ext_without_dot) {
  std::vector<Assimp::BaseImporter*> others;
  for (size_t i = 0; i < importer.GetImporterCount(); ++i) {
    if (!importer_claims(importer.GetImporterInfo(i), ext_without_dot)) others.push_back(importer.GetImporter(i));
  }
  if (others.size() == importer.GetImporterCount()) fail("this assimp build has no importer for ." + ext_without_dot);
  for (Assimp::BaseImporter* other : others) {
    importer.UnregisterLoader(other);
    delete other;  // unregistered importers are no longer owned (deleted) by the Importer
  }
}

Vec3 to_vec3(const aiVector3D& v) { return {v.x, v.y, v.z}; }

// Checked on the raw import, before any post-processing: JoinIdenticalVertices silently
// merges a NaN vertex into a neighbour, and FindInvalidData would drop the whole sub-mesh.
void check_positions(const aiScene& scene) {
  for (unsigned i = 0; i < scene.mNumMeshes; ++i) {
    const aiMesh& m = *scene.mMeshes[i];
    for (unsigned v = 0; m.mVertices && v < m.mNumVertices; ++v) {
      if (!is_finite(to_vec3(m.mVertices[v]))) {
        fail("non-finite vertex position (NaN or infinity) in sub-mesh " + std::to_string(i) + ", vertex " +
             std::to_string(v));
      }
    }
  }
}

// assimp 5.2.5's validation lets a face with no indices through (a PLY face line "0"), and
// SortByPType then dies of SIGBUS on it (found by fuzz_mesh): every face must name 1+ vertices,
// each of them in range.
void check_faces(const aiScene& scene) {
  for (unsigned i = 0; i < scene.mNumMeshes; ++i) {
    const aiMesh& m = *scene.mMeshes[i];
    for (unsigned f = 0; m.mFaces && f < m.mNumFaces; ++f) {
      const aiFace& face = m.mFaces[f];
      if (face.mNumIndices == 0 || !face.mIndices) {
        fail("face " + std::to_string(f) + " of sub-mesh " + std::to_string(i) + " has no vertices");
      }
      for (unsigned k = 0; k < face.mNumIndices; ++k) {
        if (face.mIndices[k] >= m.mNumVertices) {
          fail("face " + std::to_string(f) + " of sub-mesh " + std::to_string(i) + " refers to vertex " +
               std::to_string(face.mIndices[k]) + " of " + std::to_string(m.mNumVertices));
        }
      }
    }
  }
}

// Faces once PreTransformVertices has copied every mesh into every node that references it.
// A small file can reference one big mesh from thousands of nodes; refuse before copying.
constexpr uint64_t k_max_instanced_faces = uint64_t{1} << 28;

void check_instanced_size(const aiScene& scene) {
  uint64_t faces = 0;
  std::vector<const aiNode*> stack{scene.mRootNode};  // explicit stack: node trees can be deep
  while (!stack.empty()) {
    const aiNode* node = stack.back();
    stack.pop_back();
    if (!node) continue;
    for (unsigned i = 0; i < node->mNumMeshes; ++i) {
      if (node->mMeshes[i] < scene.mNumMeshes) faces += scene.mMeshes[node->mMeshes[i]]->mNumFaces;
    }
    if (faces > k_max_instanced_faces) fail("too many faces once node instances are expanded (more than 2^28)");
    stack.insert(stack.end(), node->mChildren, node->mChildren + node->mNumChildren);
  }
}

unsigned post_process_flags() {
  // No GenSmoothNormals: a file without normals gets geometric normals from the renderer
  // (smoothing across a box's edges would look wrong). PreTransformVertices flattens the node
  // graph (instances become copies) so one mesh in file space comes out.
  // No FindInvalidData either: it deletes a whole normal array for one zero normal (Stanford
  // dragon) and drops a sub-mesh with a NaN position ("No meshes remaining"); we check
  // positions, normals and UVs ourselves, with better messages.
  return aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices |
         aiProcess_SortByPType;
}

[[noreturn]] void fail_with_assimp_error(const Assimp::Importer& importer) {
  const char* error = importer.GetErrorString();
  if (error && *error) fail(error);
  if (!last_assimp_assert.empty()) fail(last_assimp_assert);
  fail("assimp failed without an error message");
}

// Two phases: a validated raw import we can inspect, then the post-processing steps. Together
// they run exactly what ReadFile(all flags) would, in the same order.
const aiScene* import_scene(Assimp::Importer& importer, const std::string& path) {
  last_assimp_assert.clear();
  importer.SetIOHandler(new GuardedIOSystem);  // the importer owns it
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, true);
  restrict_importers(importer, lower_extension(path).substr(1));
  const aiScene* raw = importer.ReadFile(path, aiProcess_ValidateDataStructure);
  if (!raw) fail_with_assimp_error(importer);
  if (raw->mFlags & AI_SCENE_FLAGS_INCOMPLETE) fail("assimp marked the scene incomplete");
  check_positions(*raw);
  check_faces(*raw);
  check_instanced_size(*raw);
  const aiScene* scene = importer.ApplyPostProcessing(post_process_flags());
  if (!scene) fail_with_assimp_error(importer);
  return scene;
}

// ---------------------------------------------------------------------------------------------
// Materials

// Assimp invents a material when the file has none (PLY always; OBJ without MTL and FBX
// name it "DefaultMaterial"; glTF appends an unnamed one after the file's own). Those get our
// default grey instead of assimp's white/metal guesses.
bool is_synthesised_default(MeshFormat format, const aiMaterial& m, unsigned index, unsigned count) {
  if (format == MeshFormat::ply) return true;
  aiString name;
  bool named = m.Get(AI_MATKEY_NAME, name) == aiReturn_SUCCESS && name.length > 0;
  if (named && std::strcmp(name.C_Str(), AI_DEFAULT_MATERIAL_NAME) == 0) return true;
  bool gltf = format == MeshFormat::gltf || format == MeshFormat::glb;
  return gltf && !named && index + 1 == count;
}

std::vector<MaterialDesc> convert_materials(const aiScene& scene, MeshFormat format, MeshTextureList& textures) {
  std::vector<MaterialDesc> out;
  out.reserve(scene.mNumMaterials);
  for (unsigned i = 0; i < scene.mNumMaterials; ++i) {
    const aiMaterial& m = *scene.mMaterials[i];
    if (is_synthesised_default(format, m, i, scene.mNumMaterials)) {
      out.push_back(default_mesh_material());
      continue;
    }
    out.push_back(convert_assimp_material(m));
    textures.read(m, out.back());
  }
  if (out.empty()) out.push_back(default_mesh_material());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Geometry

bool is_triangle_mesh(const aiMesh& m) {
  return (m.mPrimitiveTypes & aiPrimitiveType_TRIANGLE) && m.mNumFaces > 0 && m.mVertices;
}

// Validation ran on the raw import; post-processing should keep indices in range, but one bad
// index here would be an out-of-bounds read (or a bad Embree buffer) later, so check anyway.
bool is_usable_triangle(const aiMesh& m, const aiFace& face) {
  if (face.mNumIndices != 3 || !face.mIndices) return false;
  for (int k = 0; k < 3; ++k) {
    if (face.mIndices[k] >= m.mNumVertices) fail("a face refers to a vertex that does not exist");
  }
  return true;
}

bool is_valid_normal(Vec3 n) { return is_finite(n) && length_squared(n) > 0.0f; }

// A file's normals are kept if at least one is usable; the few bad ones (the Stanford dragon
// has one zero normal among 50,002) are repaired below rather than dropping them all.
bool has_usable_normals(const aiMesh& m) {
  if (!m.mNormals) return false;
  for (unsigned i = 0; i < m.mNumVertices; ++i) {
    if (is_valid_normal(to_vec3(m.mNormals[i]))) return true;
  }
  return false;
}

// Unit normals; a zero/NaN/Inf one becomes the area-weighted mean of its triangles' normals.
std::vector<Vec3> repaired_normals(const aiMesh& m) {
  std::vector<Vec3> normals(m.mNumVertices);
  std::vector<bool> bad(m.mNumVertices, false);
  bool any_bad = false;
  for (unsigned i = 0; i < m.mNumVertices; ++i) {
    Vec3 n = to_vec3(m.mNormals[i]);
    bad[i] = !is_valid_normal(n);
    any_bad = any_bad || bad[i];
    normals[i] = bad[i] ? Vec3{0.0f} : normalize(n);
  }
  if (!any_bad) return normals;
  for (unsigned f = 0; f < m.mNumFaces; ++f) {
    const aiFace& face = m.mFaces[f];
    if (!is_usable_triangle(m, face)) continue;
    Vec3 p0 = to_vec3(m.mVertices[face.mIndices[0]]);
    Vec3 area_normal = cross(to_vec3(m.mVertices[face.mIndices[1]]) - p0, to_vec3(m.mVertices[face.mIndices[2]]) - p0);
    for (int k = 0; k < 3; ++k) {
      if (bad[face.mIndices[k]]) normals[face.mIndices[k]] += area_normal;
    }
  }
  for (unsigned i = 0; i < m.mNumVertices; ++i) {
    if (bad[i]) normals[i] = normalize(normals[i]);  // normalize() maps zero (unused vertex) to +z
  }
  return normals;
}

Color color_at(const aiMesh& m, unsigned i) {
  if (!m.mColors[0]) return Color{1.0f};
  const aiColor4D& c = m.mColors[0][i];
  Color out{c.r, c.g, c.b};
  return is_finite(out) ? max(out, Color{0.0f}) : Color{1.0f};
}

Vec2 uv_at(const aiMesh& m, unsigned i) {
  if (!m.mTextureCoords[0]) return {};
  const aiVector3D& t = m.mTextureCoords[0][i];
  return {std::isfinite(t.x) ? t.x : 0.0f, std::isfinite(t.y) ? t.y : 0.0f};
}

// What the merged mesh carries, decided over all sub-meshes (all-or-nothing per attribute).
struct MergePlan {
  bool normals = false;
  bool uvs = false;
  bool colors = false;  // vertex colours (PLY red/green/blue, OBJ "v x y z r g b")
  std::vector<bool> usable_normals;  // per sub-mesh
  size_t vertices = 0;
  size_t triangles = 0;
};

MergePlan plan_merge(const aiScene& scene) {
  MergePlan plan;
  plan.usable_normals.resize(scene.mNumMeshes);
  for (unsigned i = 0; i < scene.mNumMeshes; ++i) {
    const aiMesh& m = *scene.mMeshes[i];
    if (!is_triangle_mesh(m)) continue;
    plan.usable_normals[i] = has_usable_normals(m);
    plan.normals = plan.normals || plan.usable_normals[i];
    plan.uvs = plan.uvs || m.mTextureCoords[0] != nullptr;
    plan.colors = plan.colors || m.mColors[0] != nullptr;
    plan.triangles += m.mNumFaces;
  }
  for (unsigned i = 0; i < scene.mNumMeshes; ++i) {
    const aiMesh& m = *scene.mMeshes[i];
    if (!is_triangle_mesh(m)) continue;
    bool flat = plan.normals && !plan.usable_normals[i];
    plan.vertices += flat ? size_t{3} * m.mNumFaces : m.mNumVertices;
  }
  return plan;
}

uint32_t vertex_base(const TriangleMesh& out, size_t adding) {
  if (out.positions.size() + adding > std::numeric_limits<uint32_t>::max()) fail("too many vertices (more than 2^32)");
  return static_cast<uint32_t>(out.positions.size());
}

// Shares the sub-mesh's vertices (the normal case).
void append_indexed(const aiMesh& m, const MergePlan& plan, TriangleMesh& out) {
  uint32_t base = vertex_base(out, m.mNumVertices);
  if (plan.normals) {
    std::vector<Vec3> normals = repaired_normals(m);
    out.normals.insert(out.normals.end(), normals.begin(), normals.end());
  }
  for (unsigned i = 0; i < m.mNumVertices; ++i) {
    out.positions.push_back(to_vec3(m.mVertices[i]));
    if (plan.uvs) out.uvs.push_back(uv_at(m, i));
    if (plan.colors) out.colors.push_back(color_at(m, i));
  }
  for (unsigned f = 0; f < m.mNumFaces; ++f) {
    const aiFace& face = m.mFaces[f];
    if (!is_usable_triangle(m, face)) continue;
    for (int k = 0; k < 3; ++k) out.indices.push_back(base + face.mIndices[k]);
    out.face_materials.push_back(m.mMaterialIndex);
  }
}

// A sub-mesh without normals in a file whose other parts have them: three vertices per
// triangle carrying the face normal, so it shades flat as it would with no normals at all.
void append_flat(const aiMesh& m, const MergePlan& plan, TriangleMesh& out) {
  for (unsigned f = 0; f < m.mNumFaces; ++f) {
    const aiFace& face = m.mFaces[f];
    if (!is_usable_triangle(m, face)) continue;
    uint32_t base = vertex_base(out, 3);
    Vec3 p[3];
    for (int k = 0; k < 3; ++k) p[k] = to_vec3(m.mVertices[face.mIndices[k]]);
    Vec3 n = normalize(cross(p[1] - p[0], p[2] - p[0]));
    for (int k = 0; k < 3; ++k) {
      out.positions.push_back(p[k]);
      out.normals.push_back(n);
      if (plan.uvs) out.uvs.push_back(uv_at(m, face.mIndices[k]));
      if (plan.colors) out.colors.push_back(color_at(m, face.mIndices[k]));
      out.indices.push_back(base + static_cast<uint32_t>(k));
    }
    out.face_materials.push_back(m.mMaterialIndex);
  }
}

TriangleMesh merge_meshes(const aiScene& scene, size_t material_count) {
  MergePlan plan = plan_merge(scene);
  TriangleMesh out;
  out.positions.reserve(plan.vertices);
  if (plan.normals) out.normals.reserve(plan.vertices);
  if (plan.uvs) out.uvs.reserve(plan.vertices);
  out.indices.reserve(plan.triangles * 3);
  out.face_materials.reserve(plan.triangles);
  for (unsigned i = 0; i < scene.mNumMeshes; ++i) {
    const aiMesh& m = *scene.mMeshes[i];
    if (!is_triangle_mesh(m)) continue;
    if (m.mMaterialIndex >= material_count) fail("sub-mesh " + std::to_string(i) + " has an invalid material index");
    if (plan.normals && !plan.usable_normals[i]) {
      append_flat(m, plan, out);
    } else {
      append_indexed(m, plan, out);
    }
  }
  if (out.triangle_count() == 0) fail("the file contains no triangles");
  return out;
}

LoadedMeshFile load_unchecked(const std::string& path) {
  MeshFormat format = check_mesh_file(path);
  Assimp::Importer importer;
  const aiScene* scene = import_scene(importer, path);
  LoadedMeshFile result;
  MeshTextureList textures(path, result.textures);
  result.materials = convert_materials(*scene, format, textures);
  result.mesh = merge_meshes(*scene, result.materials.size());
  if (!result.mesh.colors.empty()) {
    // Vertex colours multiply every material's colour; a file without materials of its own
    // (PLY scans, a bare coloured OBJ) means them as the surface colour itself.
    for (MaterialDesc& m : result.materials) {
      m.vertex_colors = true;
      if (m.name == "default" && !m.albedo.valid()) m.albedo.value = Color{1.0f};
    }
  }
  return result;
}

std::string error_prefix(const SourceLoc& where) {
  if (where.file.empty()) return {};
  std::string s = where.str();
  return s.empty() ? s : s + ": ";
}

}  // namespace

LoadedMeshFile load_mesh_file(const std::string& path, const SourceLoc& where) {
  std::string reason;
  try {
    // glTF through tinygltf: assimp 5.2.5's glTF importer has known crashes and drops the
    // material model (textures, alpha, emission strength) we need.
    std::string ext = lower_extension(path);
    if (ext == ".gltf" || ext == ".glb") return load_gltf(path);
    return load_unchecked(path);
  } catch (const LoadFailure& e) {
    reason = e.reason;
  } catch (const std::bad_alloc&) {
    reason = "out of memory";
  } catch (const std::exception& e) {
    reason = e.what();
  } catch (...) {
    reason = "unknown error";
  }
  throw SceneError(error_prefix(where) + "cannot load mesh '" + path + "': " + reason);
}

}  // namespace rt
