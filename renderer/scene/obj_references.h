// The files an OBJ mesh needs besides itself (its MTL files and the textures those name), listed
// without importing the mesh, so a master can ship them to remote workers cheaply and report a
// missing texture at the MTL line that names it rather than as a blank surface on a worker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "scene/scene_desc.h"

namespace rt {

// An MTL file larger than this is refused (real ones are kilobytes). The OBJ itself may be as
// large as any mesh (k_max_mesh_file_bytes); it is streamed, never read whole.
constexpr uint64_t k_max_mtl_file_bytes = uint64_t{64} << 20;
// Longer lines are skipped whole: no statement we look for is anywhere near this long.
constexpr size_t k_max_statement_line_bytes = size_t{64} << 10;
// At most this many mtllib statements per OBJ and texture statements per MTL.
constexpr size_t k_max_file_statements = 100000;

// A file that an OBJ (via mtllib) or an MTL file (via map_Kd, map_Ka, map_Ks, map_Ns, map_d, map_Ke,
// map_bump, bump, norm, map_Pr, map_Pm, disp, decal, refl, ...) refers to.
struct FileReference {
  std::string path;  // absolute, lexically normal, existing regular file
  std::string role;  // the keyword that named it, canonical spelling ("map_Kd" even if written "MAP_KD")
  SourceLoc from;    // file:line:column of the name in the statement that named it
};

// Scans `obj_path` (absolute) for mtllib statements and each MTL file for texture statements.
// Relative names are resolved against the folder of the file that names them (OBJ for mtllib,
// MTL for textures), then against `extra_dirs` in order. Fallbacks, tried only when that finds
// nothing: the name with backslashes turned into slashes, then a case-insensitive match of its
// file name in the same folders (MTLs written on Windows). Each file is listed once, in order of
// first mention (an MTL file comes before the textures it names). Throws SceneError, located at
// the naming statement, for a missing MTL or texture ("a.obj:3:8: mtllib 'x.mtl' not found;
// looked in: ..." or "sponza.mtl:12:9: texture 'foo.jpg' (map_Kd) not found; looked in: ..."),
// an unreadable OBJ, an MTL over k_max_mtl_file_bytes or too many statements.
// With `roots` (asset_search_dirs and the OBJ's folder), an MTL file outside them is refused
// (SceneError at its mtllib statement) before it is opened.
std::vector<FileReference> obj_referenced_files(const std::string& obj_path,
                                                const std::vector<std::string>& extra_dirs = {},
                                                const std::vector<std::string>& roots = {});

// ---------------------------------------------------------------------------------------------
// The parsing part alone, without the file system (for the fuzzer and tests).
//
// Lines end at "\n", "\r\n" or a lone "\r"; keywords and options are case-insensitive; a '#' at
// the start of a line or after whitespace starts a comment.

// One texture statement of an MTL file: `keyword` in canonical spelling, `file_name` as written
// (everything after the options, trimmed; may contain spaces), 1-based line and byte column.
struct MtlTextureStatement {
  std::string keyword;
  std::string file_name;
  int line = 0;
  int column = 0;
};

// Texture options (-s 2 2 1, -bm 0.5, -clamp on, ...) are skipped with their arguments; a
// statement without a file name is ignored. Throws std::runtime_error (reason only) for more
// than k_max_file_statements statements.
std::vector<MtlTextureStatement> parse_mtl_texture_statements(std::string_view mtl_text);

// A name as written and the 1-based byte column where it starts.
struct WrittenName {
  std::string text;
  int column = 0;
};

// One "mtllib" statement of an OBJ file: the whole remainder of the line (trimmed, without a
// comment) and its whitespace-separated words.
struct ObjMtllibStatement {
  WrittenName whole;
  std::vector<WrittenName> words;
  int line = 0;
};

// Reads `obj` to its end in bounded chunks. Throws std::runtime_error (reason only) for more than
// k_max_file_statements mtllib statements.
std::vector<ObjMtllibStatement> scan_obj_mtllib_statements(std::istream& obj);

}  // namespace rt
