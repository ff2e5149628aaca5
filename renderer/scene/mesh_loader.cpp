// load_mesh_file: OBJ/PLY/glTF/GLB/FBX through assimp, hardened for files we did not write.
//
// Assimp picks an importer by extension but falls back to sniffing every one of its ~60
// importers when that fails, so a hostile ".ply" can end up in any parser it ships. We check
// the content ourselves first, then leave the importer with only the parsers for that format,
// and give it an IO system that opens only regular files of bounded size.
#include "scene/mesh.h"

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

#include "scene/mesh_materials.h"

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

constexpr uint64_t k_max_file_bytes = uint64_t{2} << 30;  // 2 GiB, for the file and what it references
constexpr size_t k_sniff_bytes = 4096;

// Thrown inside the loader with the reason only; load_mesh_file adds location and path.
struct LoadFailure {
  std::string reason;
};

[[noreturn]] void fail(std::string reason) { throw LoadFailure{std::move(reason)}; }

// ---------------------------------------------------------------------------------------------
// Format detection

enum class MeshFormat { obj, ply, gltf, glb, fbx };

// What the first bytes say; finer than MeshFormat so mismatch messages can be specific.
enum class Content { empty, obj_text, ply, gltf_json, other_json, glb, fbx_binary, fbx_text, binary };

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<MeshFormat> format_from_extension(const std::string& ext) {
  if (ext == ".obj") return MeshFormat::obj;
  if (ext == ".ply") return MeshFormat::ply;
  if (ext == ".gltf") return MeshFormat::gltf;
  if (ext == ".glb") return MeshFormat::glb;
  if (ext == ".fbx") return MeshFormat::fbx;
  return std::nullopt;
}

bool matches(MeshFormat format, Content content) {
  switch (format) {
    case MeshFormat::obj: return content == Content::obj_text;
    case MeshFormat::ply: return content == Content::ply;
    case MeshFormat::gltf: return content == Content::gltf_json;
    case MeshFormat::glb: return content == Content::glb;
    case MeshFormat::fbx: return content == Content::fbx_binary || content == Content::fbx_text;
  }
  return false;
}

const char* describe(Content content) {
  switch (content) {
    case Content::empty: return "an empty file";
    case Content::obj_text: return "text (OBJ?)";
    case Content::ply: return "PLY";
    case Content::gltf_json: return "glTF JSON";
    case Content::other_json: return "JSON without an \"asset\" member (not glTF)";
    case Content::glb: return "binary glTF (GLB)";
    case Content::fbx_binary: return "binary FBX";
    case Content::fbx_text: return "text FBX";
    case Content::binary: return "unrecognised binary data";
  }
  return "unknown";
}

std::string read_head(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open file");
  std::string head(max_bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(max_bytes));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// Streams the whole file: a glTF's "asset" member may come after megabytes of data URIs.
bool file_contains(const std::string& path, std::string_view needle) {
  std::ifstream in(path, std::ios::binary);
  std::string window;
  std::array<char, 1 << 16> chunk;
  while (in) {
    in.read(chunk.data(), chunk.size());
    window.append(chunk.data(), static_cast<size_t>(in.gcount()));
    if (window.find(needle) != std::string::npos) return true;
    // Keep a tail so a needle split across chunks is still found.
    if (window.size() > needle.size()) window.erase(0, window.size() - needle.size());
  }
  return false;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Text formats may carry UTF-8 (names, comments) but no NULs or stray control bytes.
bool looks_like_text(std::string_view head) {
  for (unsigned char c : head) {
    bool control = c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1a;
    if (control || c == 0x7f) return false;
  }
  return true;
}

std::string_view skip_bom_and_space(std::string_view s) {
  if (starts_with(s, "\xEF\xBB\xBF")) s.remove_prefix(3);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return s;
}

uint32_t read_le32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

Content sniff_content(const std::string& path) {
  std::string head = read_head(path, k_sniff_bytes);
  std::string_view h = head;
  if (h.empty()) return Content::empty;
  if (h.size() >= 12 && starts_with(h, "glTF")) {
    uint32_t version = read_le32(h, 4);
    if (version == 1 || version == 2) return Content::glb;
  }
  if (starts_with(h, "Kaydara FBX Binary")) return Content::fbx_binary;
  if (starts_with(h, "ply\n") || starts_with(h, "ply\r\n")) return Content::ply;
  if (!looks_like_text(h)) return Content::binary;
  std::string_view body = skip_bom_and_space(h);
  if (starts_with(body, "{")) return file_contains(path, "\"asset\"") ? Content::gltf_json : Content::other_json;
  if (starts_with(body, "; FBX") || h.find("FBXHeaderExtension") != std::string_view::npos) return Content::fbx_text;
  return Content::obj_text;
}

// PLY headers are checked by us because assimp 5.2 trusts them: it loops forever (allocating)
// on a header that reaches end of file without "end_header", and it reserves memory for the
// declared element counts before reading any (a 300-byte file declaring 2e9 vertices took
// 23 GB and 88 s before failing). Headers are small, so demand the terminator early and bound
// every declared count by the bytes that are really there.
constexpr size_t k_max_ply_header_bytes = 64 * 1024;

struct PlyElement {
  uint64_t count = 0;
  uint64_t min_bytes = 0;  // smallest encoding of one instance (binary: sizes; ascii: "0 " per value)
};

struct PlyHeader {
  bool ascii = true;
  size_t header_bytes = 0;  // up to and including the end_header line
  std::vector<PlyElement> elements;
};

size_t find_ply_header_end(const std::string& head) {
  for (size_t at = head.find("\nend_header"); at != std::string::npos; at = head.find("\nend_header", at + 1)) {
    size_t after = at + std::strlen("\nend_header");
    if (after < head.size() && head[after] == '\n') return after + 1;
    if (after + 1 < head.size() && head[after] == '\r' && head[after + 1] == '\n') return after + 2;
  }
  fail("PLY header has no end_header line in its first 64 KiB (truncated or not PLY)");
}

uint64_t ply_type_bytes(const std::string& type) {
  if (type == "char" || type == "uchar" || type == "int8" || type == "uint8") return 1;
  if (type == "short" || type == "ushort" || type == "int16" || type == "uint16") return 2;
  if (type == "double" || type == "float64") return 8;
  return 4;  // int, uint, float and their sized names; unknown types are assimp's to reject
}

uint64_t parse_ply_count(const std::string& word) {
  if (word.empty() || word.size() > 19 || word.find_first_not_of("0123456789") != std::string::npos) {
    fail("PLY element count '" + word.substr(0, 32) + "' is not a non-negative integer");
  }
  return std::stoull(word);
}

// One header line: "format ...", "element <name> <count>", "property [list <count type>] ...".
void parse_ply_header_line(const std::string& line, PlyHeader& header) {
  std::istringstream words(line);
  std::string keyword;
  words >> keyword;
  if (keyword == "format") {
    std::string encoding;
    words >> encoding;
    header.ascii = encoding == "ascii";
  } else if (keyword == "element") {
    std::string name, count;
    words >> name >> count;
    header.elements.push_back({parse_ply_count(count), 0});
  } else if (keyword == "property" && !header.elements.empty()) {
    std::string type, count_type;
    words >> type;
    if (type == "list") words >> count_type;  // a list costs at least its (possibly zero) count
    header.elements.back().min_bytes += header.ascii ? 2 : ply_type_bytes(type == "list" ? count_type : type);
  }
}

PlyHeader parse_ply_header(const std::string& path) {
  std::string head = read_head(path, k_max_ply_header_bytes);
  PlyHeader header;
  header.header_bytes = find_ply_header_end(head);
  std::istringstream lines(head.substr(0, header.header_bytes));
  for (std::string line; std::getline(lines, line);) parse_ply_header_line(line, header);
  return header;
}

void check_ply_header(const std::string& path, uint64_t file_size) {
  PlyHeader header = parse_ply_header(path);
  uint64_t body = file_size - header.header_bytes;
  uint64_t needed = 0;
  for (const PlyElement& e : header.elements) {
    uint64_t per = std::max<uint64_t>(e.min_bytes, 1);
    if (e.count > body / per) fail("PLY header declares more elements than the file can hold (truncated?)");
    needed += e.count * per;
    if (needed > body) fail("PLY header declares more data than the file holds (truncated?)");
  }
}

// GLB headers declare the file and JSON chunk lengths; assimp allocates what they declare, so
// a 4 KiB file claiming a 2 GB chunk costs seconds and gigabytes before failing. They must
// agree with the real size. (glTF 1.0 binary: contentLength/contentFormat in the same places.)
void check_glb_header(std::string_view header, uint64_t file_size) {
  if (header.size() < 20) fail("GLB file is shorter than its 20-byte header");
  uint64_t declared = read_le32(header, 8);
  if (declared != file_size) {
    fail("GLB header declares " + std::to_string(declared) + " bytes but the file has " + std::to_string(file_size));
  }
  if (20 + uint64_t{read_le32(header, 12)} > file_size) fail("GLB JSON chunk runs past the end of the file");
  constexpr uint32_t k_json_chunk = 0x4E4F534A;  // "JSON" little-endian
  if (read_le32(header, 4) == 2 && read_le32(header, 16) != k_json_chunk) fail("GLB first chunk is not JSON");
}

// The JSON of a .gltf (the whole file) or a .glb (its first chunk).
std::string read_gltf_json(const std::string& path, MeshFormat format, uint64_t file_size) {
  if (format == MeshFormat::gltf) return read_head(path, file_size);
  std::string header = read_head(path, 20);
  check_glb_header(header, file_size);
  return read_head(path, 20 + uint64_t{read_le32(header, 12)}).substr(20);
}

// For quoting file content in messages: hostile bytes stay out of logs and terminals.
std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

// Assimp 5.2's glTF2 importer does strchr(mimeType, '/') + 1 on embedded images and then
// strcmp()s the result: a mimeType without '/' dereferences address 1 (found by mutating
// BoxTextured.glb). Refuse such files before assimp sees them.
void check_gltf_mime_types(std::string_view json) {
  constexpr std::string_view key = "\"mimeType\"";
  for (size_t at = json.find(key); at != std::string_view::npos; at = json.find(key, at + 1)) {
    size_t v = at + key.size();
    while (v < json.size() && (std::isspace(static_cast<unsigned char>(json[v])) || json[v] == ':')) ++v;
    if (v >= json.size() || json[v] != '"') continue;  // not a string: assimp ignores it
    size_t end = json.find('"', v + 1);
    std::string_view value = json.substr(v + 1, end == std::string_view::npos ? std::string_view::npos : end - v - 1);
    if (value.find('/') == std::string_view::npos) {
      fail("glTF image mimeType \"" + printable(value.substr(0, 64)) + "\" is not of the form type/subtype");
    }
  }
}

// Checks existence, size and content against the extension; returns the format to import.
MeshFormat check_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("file not found");
  if (!fs::is_regular_file(status)) fail("not a regular file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) fail("cannot read file size: " + ec.message());
  if (size > k_max_file_bytes) fail("file is larger than 2 GiB");

  std::string ext = lower(fs::path(path).extension().string());
  std::optional<MeshFormat> format = format_from_extension(ext);
  if (!format) {
    fail("unsupported extension '" + ext + "' (supported: .obj .ply .gltf .glb .fbx)");
  }
  Content content = sniff_content(path);
  if (content == Content::empty) fail("file is empty");
  if (!matches(*format, content)) {
    fail("content does not match the extension '" + ext + "': it looks like " + describe(content));
  }
  if (*format == MeshFormat::ply) check_ply_header(path, size);
  if (*format == MeshFormat::gltf || *format == MeshFormat::glb) {
    check_gltf_mime_types(read_gltf_json(path, *format, size));
  }
  return *format;
}

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
  restrict_importers(importer, lower(std::filesystem::path(path).extension().string()).substr(1));
  const aiScene* raw = importer.ReadFile(path, aiProcess_ValidateDataStructure);
  if (!raw) fail_with_assimp_error(importer);
  if (raw->mFlags & AI_SCENE_FLAGS_INCOMPLETE) fail("assimp marked the scene incomplete");
  check_positions(*raw);
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

std::vector<MaterialDesc> convert_materials(const aiScene& scene, MeshFormat format) {
  std::vector<MaterialDesc> out;
  out.reserve(scene.mNumMaterials);
  for (unsigned i = 0; i < scene.mNumMaterials; ++i) {
    const aiMaterial& m = *scene.mMaterials[i];
    out.push_back(is_synthesised_default(format, m, i, scene.mNumMaterials) ? default_mesh_material()
                                                                              : convert_assimp_material(m));
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

Vec2 uv_at(const aiMesh& m, unsigned i) {
  if (!m.mTextureCoords[0]) return {};
  const aiVector3D& t = m.mTextureCoords[0][i];
  return {std::isfinite(t.x) ? t.x : 0.0f, std::isfinite(t.y) ? t.y : 0.0f};
}

// What the merged mesh carries, decided over all sub-meshes (all-or-nothing per attribute).
struct MergePlan {
  bool normals = false;
  bool uvs = false;
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
  MeshFormat format = check_file(path);
  Assimp::Importer importer;
  const aiScene* scene = import_scene(importer, path);
  LoadedMeshFile result;
  result.materials = convert_materials(*scene, format);
  result.mesh = merge_meshes(*scene, result.materials.size());
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
