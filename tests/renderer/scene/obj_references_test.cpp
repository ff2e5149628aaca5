// obj_referenced_files and the MTL/OBJ statement parsers: options, line ends, case, spaces,
// Windows paths, error messages, limits, and the shared Sponza and Cornell box.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "scene/obj_references.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

namespace {

namespace fs = std::filesystem;
using rt::FileReference;
using rt::MtlTextureStatement;
using rt::SceneError;

void write_file(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The one statement of a one-statement MTL text.
MtlTextureStatement only_statement(const std::string& text) {
  std::vector<MtlTextureStatement> s = rt::parse_mtl_texture_statements(text);
  REQUIRE(s.size() == 1);
  return s[0];
}

std::string error_of(const std::string& obj, const std::vector<std::string>& extra = {}) {
  try {
    rt::obj_referenced_files(obj, extra);
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> paths_of(const std::vector<FileReference>& refs) {
  std::vector<std::string> out;
  for (const FileReference& r : refs) out.push_back(r.path);
  return out;
}

const char* k_triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing

TEST_CASE("obj_references: texture options are skipped with their arguments") {
  MtlTextureStatement s = only_statement("newmtl a\nmap_Kd -s 2 2 1 -bm 0.5 tex.png\n");
  CHECK(s.keyword == "map_Kd");
  CHECK(s.file_name == "tex.png");
  CHECK(s.line == 2);
  CHECK(s.column == 25);
  CHECK(only_statement("map_Kd -blendu off -blendv on -cc on -clamp on -imfchan r -mm 0 1 -o 0.1 -t 1 1 "
                       "-texres 512 -type sphere -boost 2.5 a.png")
            .file_name == "a.png");
  // Optional numbers: one, two or three; never the file name itself.
  CHECK(only_statement("map_Kd -s 2 tex.png").file_name == "tex.png");
  CHECK(only_statement("map_Kd -o 1 2 -mm 0.2 tex.png").file_name == "tex.png");
  CHECK(only_statement("map_Kd -s 1 1 1 2.png").file_name == "2.png");
  CHECK(only_statement("map_Kd -s 2 2 7").file_name == "7");
  CHECK(only_statement("map_Kd -S 2 -CLAMP ON tex.png").file_name == "tex.png");
  // An argument of the wrong kind is not swallowed; an unknown option starts the name.
  CHECK(only_statement("map_Kd -clamp tex.png").file_name == "tex.png");
  CHECK(only_statement("map_Kd -imfchan tex.png").file_name == "tex.png");
  CHECK(only_statement("map_Kd -unknown tex.png").file_name == "-unknown tex.png");
  // Options and nothing else: no file, no statement.
  CHECK(rt::parse_mtl_texture_statements("map_Kd -bm 0.5\nmap_Kd\nbump   \n").empty());
}

TEST_CASE("obj_references: CRLF, lone CR, leading whitespace, BOM and comments") {
  std::vector<MtlTextureStatement> s =
      rt::parse_mtl_texture_statements("\xEF\xBB\xBFmap_Kd a.png\r\n# map_Kd no.png\r\n\t  map_Ks  b.png \r\n"
                                       "Kd 1 1 1 # map_Kd no.png\rmap_d c.png # alpha\r\n   # bump no.png\nbump d#1.png");
  REQUIRE(s.size() == 4);
  CHECK(s[0].file_name == "a.png");
  CHECK(s[0].line == 1);
  CHECK(s[1].file_name == "b.png");
  CHECK(s[1].line == 3);
  CHECK(s[1].column == 12);
  CHECK(s[2].file_name == "c.png");
  CHECK(s[2].line == 5);
  CHECK(s[3].file_name == "d#1.png");
  CHECK(s[3].line == 7);
}

TEST_CASE("obj_references: keywords are case-insensitive and come out canonical") {
  std::vector<MtlTextureStatement> s =
      rt::parse_mtl_texture_statements("Map_Kd a.png\nMAP_BUMP b.png\nBump c.png\nNORM d.png\nmap_pr e.png\nDisp f.png\n"
                                       "decal g.png\nrefl -type sphere h.png\nmap_ke i.png\nmap_NS j.png\nmap_D k.png\n");
  std::vector<std::string> keywords;
  for (const MtlTextureStatement& t : s) keywords.push_back(t.keyword);
  CHECK(keywords == std::vector<std::string>{"map_Kd", "map_bump", "bump", "norm", "map_Pr", "disp", "decal", "refl",
                                              "map_Ke", "map_Ns", "map_d"});
  CHECK(s[7].file_name == "h.png");
  // Not texture statements: colours, anti-aliasing, material names, keyword prefixes.
  CHECK(rt::parse_mtl_texture_statements("Kd 1 1 1\nmap_aat on\nnewmtl map_Kd\nmap_Kdx a.png\nbumpy a.png\n").empty());
}

TEST_CASE("obj_references: file names keep their spaces, trimmed") {
  CHECK(only_statement("map_Kd   my texture  file.png  \t\r\n").file_name == "my texture  file.png");
  CHECK(only_statement("map_Kd -bm 1 C:\\My Textures\\wood.png").file_name == "C:\\My Textures\\wood.png");
}

TEST_CASE("obj_references: overlong lines are skipped, later lines keep their numbers") {
  std::string text = "map_Kd a.png\nmap_Kd " + std::string(rt::k_max_statement_line_bytes, 'x') + "\nmap_Kd b.png";
  std::vector<MtlTextureStatement> s = rt::parse_mtl_texture_statements(text);
  REQUIRE(s.size() == 2);
  CHECK(s[1].file_name == "b.png");
  CHECK(s[1].line == 3);
}

TEST_CASE("obj_references: more than the statement limit is refused") {
  std::string text;
  for (size_t i = 0; i <= rt::k_max_file_statements; ++i) text += "bump a\n";
  CHECK_THROWS_WITH_AS(rt::parse_mtl_texture_statements(text), doctest::Contains("more than 100000"),
                       std::runtime_error);
}

TEST_CASE("obj_references: binary garbage, NUL bytes and absurd options do not crash") {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) % 256);
  rt::parse_mtl_texture_statements(garbage);
  std::istringstream obj(garbage);
  rt::scan_obj_mtllib_statements(obj);
  std::string options = "map_Kd";
  for (int i = 0; i < 5000; ++i) options += " -s 1e999 -o -.5 -mm";
  CHECK(rt::parse_mtl_texture_statements(options).empty());
  CHECK(only_statement(std::string("map_Kd a\0b.png", 14)).file_name == std::string("a\0b.png", 7));
}

TEST_CASE("obj_references: mtllib statements of an OBJ") {
  std::istringstream obj("# mtllib no.mtl\r\nv 0 0 0\r\n  MTLLIB a.mtl  b.mtl # two\r\nmtllib\r\nmtllibx c.mtl\r\n");
  std::vector<rt::ObjMtllibStatement> s = rt::scan_obj_mtllib_statements(obj);
  REQUIRE(s.size() == 1);
  CHECK(s[0].line == 3);
  CHECK(s[0].whole.text == "a.mtl  b.mtl");
  REQUIRE(s[0].words.size() == 2);
  CHECK(s[0].words[1].text == "b.mtl");
  CHECK(s[0].words[1].column == 17);
}

TEST_CASE("obj_references: OBJ lines and CRLFs split across read chunks keep their numbers") {
  // The scanner reads 64 KiB at a time: put a CRLF's two bytes on either side of the boundary,
  // then a line longer than the limit, then the statement.
  std::string text = "# " + std::string(65536 - 3, 'x') + "\r\n";
  REQUIRE(text.find('\r') == 65535);
  text += "v 0 0 0\n# " + std::string(3 * rt::k_max_statement_line_bytes, 'y') + "\nmtllib a.mtl";
  std::istringstream obj(text);
  std::vector<rt::ObjMtllibStatement> s = rt::scan_obj_mtllib_statements(obj);
  REQUIRE(s.size() == 1);
  CHECK(s[0].line == 4);
  CHECK(s[0].whole.text == "a.mtl");
}

// ---------------------------------------------------------------------------------------------
// Files

TEST_CASE("obj_references: two MTL files, textures in order of first mention, each once") {
  fs::path dir = test_paths::temp_dir("objref_two_mtl");
  write_file(dir / "m.obj", std::string("mtllib a.mtl b.mtl\n") + k_triangle + "mtllib a.mtl\n");
  write_file(dir / "a.mtl", "newmtl x\nmap_Kd -s 2 2 1 -bm 0.5 tex.png\nmap_Ka tex.png\nbump sub/bump.png\n");
  write_file(dir / "b.mtl", "newmtl y\r\nMap_Ks tex.png\r\nmap_d sub/../alpha.png\r\n");
  for (const char* f : {"tex.png", "sub/bump.png", "alpha.png"}) write_file(dir / f, "x");
  std::vector<FileReference> refs = rt::obj_referenced_files((dir / "m.obj").string());
  std::string d = dir.string();
  CHECK(paths_of(refs) == std::vector<std::string>{d + "/a.mtl", d + "/tex.png", d + "/sub/bump.png", d + "/b.mtl",
                                                   d + "/alpha.png"});
  REQUIRE(refs.size() == 5);
  CHECK(refs[0].role == "mtllib");
  CHECK(refs[0].from.str() == d + "/m.obj:1:8");
  CHECK(refs[1].role == "map_Kd");
  CHECK(refs[1].from.str() == d + "/a.mtl:2:25");
  CHECK(refs[3].from.str() == d + "/m.obj:1:14");
  CHECK(refs[4].role == "map_d");
  fs::remove_all(dir);
}

TEST_CASE("obj_references: names with spaces, backslashes, other case, extra folders") {
  fs::path dir = test_paths::temp_dir("objref_fallbacks");
  fs::path extra = test_paths::temp_dir("objref_fallbacks_extra");
  write_file(dir / "m.obj", std::string("mtllib my materials.mtl\n") + k_triangle);
  write_file(dir / "my materials.mtl",
             "map_Kd textures\\Wood Grain.png\nmap_Ks TEXTURES\\wood grain.png\nbump textures/BRICK.JPG\n"
             "map_d shared.png\n");
  write_file(dir / "textures/Wood Grain.png", "x");
  write_file(dir / "textures/brick.jpg", "x");
  write_file(extra / "shared.png", "x");
  // The folder part must match exactly: "TEXTURES\wood grain.png" is not found, so expect an error.
  CHECK(contains(error_of((dir / "m.obj").string(), {extra.string()}), "my materials.mtl:2:8: texture 'TEXTURES"));
  write_file(dir / "my materials.mtl", "map_Kd textures\\Wood Grain.png\nmap_Ks textures\\wood grain.png\n"
                                       "bump textures/BRICK.JPG\nmap_d shared.png\n");
  std::vector<FileReference> refs = rt::obj_referenced_files((dir / "m.obj").string(), {extra.string()});
  std::string d = dir.string();
  CHECK(paths_of(refs) == std::vector<std::string>{d + "/my materials.mtl", d + "/textures/Wood Grain.png",
                                                   d + "/textures/brick.jpg", extra.string() + "/shared.png"});
  fs::remove_all(dir);
  fs::remove_all(extra);
}

TEST_CASE("obj_references: a missing texture names the MTL file, line and folders searched") {
  fs::path dir = test_paths::temp_dir("objref_missing");
  write_file(dir / "m.obj", std::string("mtllib m.mtl\n") + k_triangle);
  write_file(dir / "m.mtl", "newmtl a\nKd 1 1 1\n\tmap_Kd -bm 1 gone.jpg\n");
  std::string msg = error_of((dir / "m.obj").string(), {"/nonexistent-extra"});
  CHECK(msg == (dir / "m.mtl").string() + ":3:15: texture 'gone.jpg' (map_Kd) not found; looked in: " +
                   dir.string() + ", /nonexistent-extra");
  fs::remove_all(dir);
}

TEST_CASE("obj_references: a missing MTL, a missing OBJ, an oversized MTL") {
  fs::path dir = test_paths::temp_dir("objref_missing_mtl");
  write_file(dir / "m.obj", std::string("v 0 0 0\nmtllib here.mtl x.mtl\n") + k_triangle);
  write_file(dir / "here.mtl", "");
  CHECK(error_of((dir / "m.obj").string()) ==
        (dir / "m.obj").string() + ":2:17: mtllib 'x.mtl' not found; looked in: " + dir.string());
  CHECK(contains(error_of((dir / "none.obj").string()), "none.obj"));
  write_file(dir / "m.obj", std::string("mtllib big.mtl\n") + k_triangle);
  write_file(dir / "big.mtl", "");
  fs::resize_file(dir / "big.mtl", rt::k_max_mtl_file_bytes + 1);  // sparse: costs no disk
  CHECK(contains(error_of((dir / "m.obj").string()), "m.obj:1:8: MTL file '" + (dir / "big.mtl").string() +
                                                          "' is larger than 64 MiB"));
  fs::remove_all(dir);
}

TEST_CASE("obj_references: an OBJ without mtllib, and a NUL in a name, find nothing") {
  fs::path dir = test_paths::temp_dir("objref_none");
  write_file(dir / "m.obj", k_triangle);
  CHECK(rt::obj_referenced_files((dir / "m.obj").string()).empty());
  write_file(dir / "m.obj", std::string("mtllib m.mtl\n") + k_triangle);
  write_file(dir / "m.mtl", std::string("map_Kd tex.png\0.jpg\n", 20));
  write_file(dir / "tex.png", "x");
  CHECK(contains(error_of((dir / "m.obj").string()), "texture 'tex.png?.jpg' (map_Kd) not found"));
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Real third-party files (../shared/scenes), skipped when absent.

TEST_CASE("obj_references: shared Sponza lists sponza.mtl and its JPG textures") {
  std::string obj = test_paths::shared_scenes() + "/sponza-dabrovic/sponza.obj";
  if (!fs::exists(obj)) {
    MESSAGE("skipped: " << obj << " not found (shared third-party scenes)");
    return;
  }
  // 74 texture statements name 17 distinct JPGs, all present with the same case; the folder has
  // three more that no material uses (01_s_kap.jpg, 01_s_kap-bump.jpg, x01_st-bump.jpg).
  std::vector<FileReference> refs = rt::obj_referenced_files(obj);
  REQUIRE(refs.size() == 18);
  CHECK(fs::path(refs[0].path).filename() == "sponza.mtl");
  CHECK(refs[0].role == "mtllib");
  std::set<std::string> unique;
  for (size_t i = 1; i < refs.size(); ++i) {
    CHECK(fs::is_regular_file(refs[i].path));
    CHECK(fs::path(refs[i].path).extension() == ".jpg");
    CHECK(fs::path(refs[i].from.file).filename() == "sponza.mtl");
    CHECK(refs[i].from.line > 0);
    unique.insert(refs[i].path);
  }
  CHECK(unique.size() == refs.size() - 1);
  CHECK(unique.count(fs::path(refs[0].path).parent_path().string() + "/01_s_kap.jpg") == 0);
}

TEST_CASE("obj_references: shared Cornell box lists one MTL and no textures") {
  std::string obj = test_paths::shared_scenes() + "/cornell-box/CornellBox-Original.obj";
  if (!fs::exists(obj)) {
    MESSAGE("skipped: " << obj << " not found (shared third-party scenes)");
    return;
  }
  std::vector<FileReference> refs = rt::obj_referenced_files(obj);
  REQUIRE(refs.size() == 1);
  CHECK(fs::path(refs[0].path).filename() == "CornellBox-Original.mtl");
  CHECK(refs[0].from.line == 12);
}

TEST_SUITE_END();
