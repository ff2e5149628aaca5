// load_mesh_file: small files written here, hostile inputs, and the shared third-party scenes.
#include <cmath>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include <doctest/doctest.h>

#include "mesh/mesh.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

namespace {

namespace fs = std::filesystem;
using rt::LoadedMeshFile;
using rt::MaterialKind;
using rt::SceneError;
using rt::Vec3;

std::string write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path.string();
}

// The SceneError message of a failing load ("" if it loaded).
std::string load_error(const std::string& path, const rt::SourceLoc& where = {}) {
  try {
    rt::load_mesh_file(path, where);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const rt::MaterialDesc* material_of_triangle(const LoadedMeshFile& f, size_t tri) {
  return &f.materials.at(f.mesh.face_materials.at(tri));
}

int material_index(const LoadedMeshFile& f, const std::string& name) {
  for (size_t i = 0; i < f.materials.size(); ++i) {
    if (f.materials[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool near(Vec3 a, Vec3 b, float eps = 1e-5f) { return rt::length(a - b) <= eps; }

// Invariants every successful load must satisfy, whatever the file.
void check_well_formed(const LoadedMeshFile& f) {
  const rt::TriangleMesh& m = f.mesh;
  REQUIRE(!f.materials.empty());
  REQUIRE(m.triangle_count() > 0);
  REQUIRE(m.indices.size() == 3 * m.triangle_count());
  REQUIRE(m.face_materials.size() == m.triangle_count());
  CHECK((m.normals.empty() || m.normals.size() == m.positions.size()));
  CHECK((m.uvs.empty() || m.uvs.size() == m.positions.size()));
  bool indices_ok = true, materials_ok = true, finite_ok = true, normals_ok = true;
  for (uint32_t i : m.indices) indices_ok = indices_ok && i < m.positions.size();
  for (uint32_t i : m.face_materials) materials_ok = materials_ok && i < f.materials.size();
  for (Vec3 p : m.positions) finite_ok = finite_ok && rt::is_finite(p);
  for (Vec3 n : m.normals) normals_ok = normals_ok && std::fabs(rt::length(n) - 1.0f) < 1e-3f;
  CHECK(indices_ok);
  CHECK(materials_ok);
  CHECK(finite_ok);
  CHECK(normals_ok);
}

// Four unit squares at heights 0..3, one material each; the MTL uses CRLF line ends.
const char* k_tiny_obj =
    "mtllib tiny.mtl\n"
    "v 0 0 0\nv 1 0 0\nv 1 0 1\nv 0 0 1\n"
    "v 0 1 0\nv 1 1 0\nv 1 1 1\nv 0 1 1\n"
    "v 0 2 0\nv 1 2 0\nv 1 2 1\nv 0 2 1\n"
    "v 0 3 0\nv 1 3 0\nv 1 3 1\nv 0 3 1\n"
    "usemtl floor\nf 1 4 3 2\n"
    "usemtl lamp\nf 5 6 7 8\n"
    "usemtl chrome\nf 9 12 11 10\n"
    "usemtl water\nf 13 16 15 14\n";

const char* k_tiny_mtl =
    "newmtl floor\r\n  Kd 0.5 0.25 0.125 # comment\r\n  Ks 0 0 0\r\n  illum 2\r\n\r\n"
    "newmtl lamp\r\n  Kd 0.1 0.1 0.1\r\n  Ke 4 5 6\r\n\r\n"
    "newmtl chrome\r\n  Kd 0.01 0.01 0.01\r\n  Ks 0.9 0.9 0.9\r\n  Ns 1000\r\n  illum 5\r\n\r\n"
    "newmtl water\r\n  Kd 0 0 0\r\n  Ni 1.33\r\n  illum 7\r\n";

}  // namespace

TEST_CASE("load_mesh_file: OBJ with MTL (triangles, positions, materials, Ke -> emissive)") {
  fs::path dir = test_paths::temp_dir("mesh_obj");
  write_file(dir / "tiny.mtl", k_tiny_mtl);
  LoadedMeshFile f = rt::load_mesh_file(write_file(dir / "tiny.obj", k_tiny_obj), {});
  check_well_formed(f);
  const rt::TriangleMesh& m = f.mesh;
  CHECK(m.triangle_count() == 8);
  CHECK(m.normals.empty());  // the file has none: the renderer uses geometric normals
  CHECK(m.uvs.empty());

  const char* by_height[] = {"floor", "lamp", "chrome", "water"};
  for (size_t t = 0; t < m.triangle_count(); ++t) {
    float y = m.positions[m.indices[3 * t]].y;
    for (int k = 0; k < 3; ++k) {
      Vec3 p = m.positions[m.indices[3 * t + k]];
      CHECK(p.y == y);
      CHECK((p.x == 0.0f || p.x == 1.0f));
      CHECK((p.z == 0.0f || p.z == 1.0f));
    }
    CHECK(material_of_triangle(f, t)->name == by_height[static_cast<int>(y)]);
  }

  const rt::MaterialDesc& floor = f.materials.at(material_index(f, "floor"));
  CHECK(floor.kind == MaterialKind::diffuse);
  CHECK(near(floor.albedo.value, {0.5f, 0.25f, 0.125f}));
  const rt::MaterialDesc& lamp = f.materials.at(material_index(f, "lamp"));
  CHECK(lamp.kind == MaterialKind::emissive);
  CHECK(near(lamp.emission, {4, 5, 6}));
  CHECK(f.materials.at(material_index(f, "chrome")).kind == MaterialKind::mirror);
  const rt::MaterialDesc& water = f.materials.at(material_index(f, "water"));
  CHECK(water.kind == MaterialKind::glass);
  CHECK(water.ior == doctest::Approx(1.33f));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: OBJ without MTL gets the default grey material") {
  fs::path dir = test_paths::temp_dir("mesh_obj_nomtl");
  LoadedMeshFile f = rt::load_mesh_file(write_file(dir / "t.OBJ", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"), {});
  check_well_formed(f);
  CHECK(f.mesh.triangle_count() == 1);
  const rt::MaterialDesc* mat = material_of_triangle(f, 0);
  CHECK(mat->kind == MaterialKind::diffuse);
  CHECK(near(mat->albedo.value, Vec3{0.8f}));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: normals and UVs are all-or-nothing across sub-meshes") {
  fs::path dir = test_paths::temp_dir("mesh_obj_mixed");
  // First group has vn/vt, second has neither: normals and uvs must cover every vertex.
  std::string obj =
      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 2\nv 1 0 2\nv 0 1 2\n"
      "vn 0 0 3\nvt 0.25 0.5\nvt 0.75 0.5\nvt 0.25 1\n"
      "g smooth\nf 1/1/1 2/2/1 3/3/1\n"
      "g bare\nf 4 5 6\n";
  LoadedMeshFile f = rt::load_mesh_file(write_file(dir / "mixed.obj", obj), {});
  check_well_formed(f);
  const rt::TriangleMesh& m = f.mesh;
  REQUIRE(m.triangle_count() == 2);
  REQUIRE(m.normals.size() == m.positions.size());
  REQUIRE(m.uvs.size() == m.positions.size());
  for (size_t t = 0; t < 2; ++t) {
    for (int k = 0; k < 3; ++k) {
      uint32_t v = m.indices[3 * t + k];
      CHECK(near(m.normals[v], {0, 0, 1}));  // file normal normalised; face normal for "bare"
      bool textured = m.positions[v].z == 0.0f;
      CHECK(m.uvs[v].x == (textured ? 0.25f + 0.5f * m.positions[v].x : 0.0f));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: a zero normal in the file is repaired, not the whole array dropped") {
  fs::path dir = test_paths::temp_dir("mesh_obj_zero_normal");
  std::string obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nvn 0 0 0\nf 1//1 2//1 3//2\n";
  LoadedMeshFile f = rt::load_mesh_file(write_file(dir / "zero.obj", obj), {});
  check_well_formed(f);
  REQUIRE(f.mesh.normals.size() == f.mesh.positions.size());
  for (Vec3 n : f.mesh.normals) CHECK(near(n, {0, 0, 1}));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: ASCII PLY") {
  fs::path dir = test_paths::temp_dir("mesh_ply");
  std::string ply =
      "ply\nformat ascii 1.0\ncomment a square and a triangle\n"
      "element vertex 5\nproperty float x\nproperty float y\nproperty float z\n"
      "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
      "0 0 0\n2 0 0\n2 2 0\n0 2 0\n1 1 3\n"
      "4 0 1 2 3\n3 0 1 4\n";
  LoadedMeshFile f = rt::load_mesh_file(write_file(dir / "tiny.ply", ply), {});
  check_well_formed(f);
  CHECK(f.mesh.triangle_count() == 3);
  std::set<std::tuple<float, float, float>> got;
  for (Vec3 p : f.mesh.positions) got.insert({p.x, p.y, p.z});
  std::set<std::tuple<float, float, float>> want{{0, 0, 0}, {2, 0, 0}, {2, 2, 0}, {0, 2, 0}, {1, 1, 3}};
  CHECK(got == want);
  REQUIRE(f.materials.size() == 1);  // PLY has no materials: ours, not assimp's white
  CHECK(f.materials[0].kind == MaterialKind::diffuse);
  CHECK(near(f.materials[0].albedo.value, Vec3{0.8f}));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: missing, empty, garbage and truncated files are SceneErrors") {
  fs::path dir = test_paths::temp_dir("mesh_bad");
  rt::SourceLoc where{"scene.toml", 3, 5};

  std::string missing = (dir / "nope.obj").string();
  std::string msg = load_error(missing, where);
  CHECK(contains(msg, where.str() + ": cannot load mesh '" + missing + "'"));
  CHECK(contains(msg, "not found"));
  CHECK(contains(load_error(missing), "cannot load mesh '" + missing + "'"));

  CHECK(contains(load_error(write_file(dir / "empty.obj", "")), "empty"));
  CHECK(contains(load_error(write_file(dir / "prose.obj", "This is some prose, not a mesh; it has no faces.\n")),
                 "cannot load mesh"));
  CHECK(contains(load_error(write_file(dir / "mesh.stl", "solid x\nendsolid x\n")), "unsupported extension"));
  CHECK(contains(load_error(dir.string() + "/"), "cannot load mesh"));  // a directory

  std::string garbage;
  for (int i = 0; i < 3000; ++i) garbage.push_back(static_cast<char>((i * 7919 + 13) % 256));
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "garbage.obj", garbage), {}), SceneError);
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "garbage.glb", std::string("glTF\x02\0\0\0", 8) + garbage), {}), SceneError);
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "garbage.fbx", "Kaydara FBX Binary  " + garbage), {}), SceneError);
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "garbage.ply", "ply\n" + garbage), {}), SceneError);

  std::string truncated_ply =
      "ply\nformat binary_little_endian 1.0\nelement vertex 100\nproperty float x\nproperty float y\n"
      "property float z\nelement face 50\nproperty list uchar int vertex_indices\nend_header\n"
      "\x01\x02\x03\x04\x05";
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "truncated.ply", truncated_ply), {}), SceneError);
  // Assimp reserves what a PLY header declares before reading; the loader must refuse first.
  std::string overclaiming_ply =
      "ply\nformat ascii 1.0\nelement vertex 10000000\nproperty float x\nproperty float y\nproperty float z\n"
      "end_header\n0 0 0\n";
  CHECK(contains(load_error(write_file(dir / "overclaiming.ply", overclaiming_ply)), "declares more"));
  // ... and loops forever on a header cut off before end_header.
  CHECK(contains(load_error(write_file(dir / "cut_header.ply", "ply\nformat ascii 1.0\ncomm")), "end_header"));
  // A GLB whose JSON chunk claims 2 GB: assimp would allocate it.
  const char glb_bytes[] = "glTF\x02\0\0\0\x1c\0\0\0\0\0\0\x7fJSON{}      ";
  std::string overclaiming_glb(glb_bytes, sizeof glb_bytes - 1);
  CHECK(contains(load_error(write_file(dir / "overclaiming.glb", overclaiming_glb)), "GLB JSON chunk"));
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "truncated.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"meshes\": [{"), {}), SceneError);
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "truncated.obj", "v 0 0 0\nv 1 0 0\nf 1 2 3"), {}), SceneError);
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: content that does not match the extension is rejected") {
  fs::path dir = test_paths::temp_dir("mesh_mismatch");
  std::string obj_text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  std::string msg = load_error(write_file(dir / "really_obj.ply", obj_text));
  CHECK(contains(msg, "does not match"));
  CHECK(contains(msg, "really_obj.ply"));
  CHECK(contains(load_error(write_file(dir / "really_ply.obj", "ply\nformat ascii 1.0\nend_header\n")), "does not match"));
  CHECK(contains(load_error(write_file(dir / "not_gltf.gltf", "{\"meshes\": []}")), "does not match"));
  CHECK(contains(load_error(write_file(dir / "json.glb", "{\"asset\": {}}")), "does not match"));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: non-finite positions are rejected naming the file") {
  fs::path dir = test_paths::temp_dir("mesh_nan");
  std::string header =
      "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
      "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
  float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  xyz[4] = std::nanf("");
  std::string body(reinterpret_cast<const char*>(xyz), sizeof xyz);
  unsigned char count = 3;
  int idx[3] = {0, 1, 2};
  body.push_back(static_cast<char>(count));
  body.append(reinterpret_cast<const char*>(idx), sizeof idx);
  std::string path = write_file(dir / "nan.ply", header + body);
  std::string msg = load_error(path);
  CHECK(contains(msg, "cannot load mesh '" + path + "'"));
  CHECK(contains(msg, "non-finite"));
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: glTF buffers pointing at devices do not hang or crash") {
  fs::path dir = test_paths::temp_dir("mesh_gltf_dev");
  std::string gltf =
      R"({"asset": {"version": "2.0"}, "buffers": [{"uri": "/dev/zero", "byteLength": 36}],
          "bufferViews": [{"buffer": 0, "byteLength": 36}],
          "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                         "min": [0, 0, 0], "max": [1, 1, 0]}],
          "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
          "nodes": [{"mesh": 0}], "scenes": [{"nodes": [0]}], "scene": 0})";
  CHECK_THROWS_AS(rt::load_mesh_file(write_file(dir / "dev.gltf", gltf), {}), SceneError);
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: glTF image mimeType without '/' is refused (crashes assimp 5.2)") {
  fs::path dir = test_paths::temp_dir("mesh_gltf_mime");
  std::string gltf =
      R"({"asset": {"version": "2.0"}, "buffers": [{"uri": "data:application/octet-stream;base64,AAAA", "byteLength": 3}],
          "bufferViews": [{"buffer": 0, "byteLength": 3}],
          "images": [{"bufferView": 0, "mimeType": "imagepng"}]})";
  std::string msg = load_error(write_file(dir / "mime.gltf", gltf));
  CHECK(contains(msg, "mimeType"));
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Real third-party files (../shared/scenes), skipped when absent.

namespace {

bool skip_without_shared_scenes() {
  if (test_paths::have_shared_scenes()) return false;
  MESSAGE("skipped: " << test_paths::shared_scenes() << " not found (shared third-party scenes)");
  return true;
}

LoadedMeshFile load_shared(const std::string& rel) {
  LoadedMeshFile f = rt::load_mesh_file(test_paths::shared_scenes() + "/" + rel, {});
  check_well_formed(f);
  return f;
}

}  // namespace

TEST_CASE("load_mesh_file: shared Cornell box (OBJ, CRLF, emissive 'light')") {
  if (skip_without_shared_scenes()) return;
  LoadedMeshFile f = load_shared("cornell-box/CornellBox-Original.obj");
  CHECK(f.mesh.triangle_count() == 36);  // 18 quads in the file
  int light = material_index(f, "light");
  REQUIRE(light >= 0);
  CHECK(f.materials[light].kind == MaterialKind::emissive);
  CHECK(near(f.materials[light].emission, {17, 12, 4}));
  size_t light_triangles = 0;
  for (uint32_t mat : f.mesh.face_materials) light_triangles += mat == static_cast<uint32_t>(light);
  CHECK(light_triangles == 2);
  CHECK(f.materials.at(material_index(f, "leftWall")).kind == MaterialKind::diffuse);
}

TEST_CASE("load_mesh_file: shared Stanford PLYs (ASCII, big- and little-endian binary)") {
  if (skip_without_shared_scenes()) return;
  CHECK(load_shared("stanford-bunny/bun_zipper.ply").mesh.triangle_count() == 69451);
  CHECK(load_shared("stanford-bunny/bun_zipper_res4.ply").mesh.triangle_count() == 948);
  CHECK(load_shared("stanford-armadillo/Armadillo.ply").mesh.triangle_count() == 345944);
  LoadedMeshFile dragon = load_shared("stanford-dragon-100k/dragon_100k.ply");
  CHECK(dragon.mesh.triangle_count() == 100000);
  CHECK(dragon.mesh.normals.size() == dragon.mesh.positions.size());  // the file has normals
}

TEST_CASE("load_mesh_file: shared glTF and GLB") {
  if (skip_without_shared_scenes()) return;
  LoadedMeshFile helmet = load_shared("damaged-helmet/DamagedHelmet.gltf");
  CHECK(helmet.mesh.triangle_count() == 15452);
  CHECK(helmet.mesh.normals.size() == helmet.mesh.positions.size());
  CHECK(helmet.mesh.uvs.size() == helmet.mesh.positions.size());
  const rt::MaterialDesc* mat = material_of_triangle(helmet, 0);
  CHECK(mat->name == "Material_MR");
  // glTF metallic-roughness with its four textures (occlusion is not used: paths find it).
  CHECK(mat->kind == MaterialKind::pbr);
  CHECK(mat->albedo.valid());
  CHECK(mat->metallic_roughness.valid());
  CHECK(mat->normal_map.valid());
  CHECK(mat->emission_map.valid());
  CHECK(helmet.textures.size() == 4);

  CHECK(load_shared("gltf-basics/BoxTextured-glTF-Binary/BoxTextured.glb").mesh.triangle_count() == 12);
  CHECK(load_shared("gltf-basics/BoxTextured-glTF/BoxTextured.gltf").mesh.triangle_count() == 12);
  // 75,730 triangles in its 29 meshes; 121,496 once the 82 nodes place (and repeat) them.
  CHECK(load_shared("gltf-basics/2CylinderEngine-glTF-Binary/2CylinderEngine.glb").mesh.triangle_count() == 121496);
}

TEST_CASE("load_mesh_file: headers claiming 2^31 vertices or faces are refused before any allocation") {
  fs::path dir = test_paths::temp_dir("mesh_huge_claims");
  const auto start = std::chrono::steady_clock::now();
  for (const char* count : {"2147483648", "4294967295", "18446744073709551615"}) {
    CAPTURE(count);
    std::string binary = std::string("ply\nformat binary_little_endian 1.0\nelement vertex ") + count +
                         "\nproperty float x\nproperty float y\nproperty float z\nend_header\n" + std::string(36, '\0');
    CHECK(contains(load_error(write_file(dir / "huge_binary.ply", binary)), "huge_binary.ply"));
    std::string ascii = std::string("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n") +
                        "property float z\nelement face " + count +
                        "\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n";
    CHECK(contains(load_error(write_file(dir / "huge_faces.ply", ascii)), "huge_faces.ply"));
  }
  // A GLB whose JSON chunk claims 2^31 bytes.
  std::string glb("glTF\x02\x00\x00\x00\x24\x00\x00\x00\x00\x00\x00\x80JSON", 20);
  glb += std::string(16, ' ');
  CHECK(contains(load_error(write_file(dir / "huge_chunk.glb", glb)), "huge_chunk.glb"));
  // Refused from the header alone: far under a second (a reservation would take many).
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 1.0);
  fs::remove_all(dir);
}

TEST_CASE("load_mesh_file: a PLY face without indices is refused (SIGBUS in assimp's SortByPType, found by fuzz_mesh)") {
  fs::path dir = test_paths::temp_dir("mesh_empty_face");
  const std::string header =
      "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
      "element face 2\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n";
  CHECK(contains(load_error(write_file(dir / "empty_face.ply", header + "0\n3 0 1 2\n")), "face 0 of sub-mesh 0 has no vertices"));
  // The fuzzer's input itself, kept as a seed: its first byte picked the .ply extension.
  std::ifstream seed(test_paths::project("tests/fuzz/corpus/fuzz_mesh/ply_face_without_indices_sigbus"), std::ios::binary);
  std::string found((std::istreambuf_iterator<char>(seed)), std::istreambuf_iterator<char>());
  REQUIRE(found.size() > 1);
  CHECK(contains(load_error(write_file(dir / "found.ply", found.substr(1))), "has no vertices"));
  // A well-formed neighbour still loads.
  CHECK_NOTHROW(rt::load_mesh_file(write_file(dir / "ok.ply", header + "3 0 1 2\n3 0 2 1\n"), {}));
  fs::remove_all(dir);
}

TEST_SUITE_END();
