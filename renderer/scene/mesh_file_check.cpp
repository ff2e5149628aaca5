#include "scene/mesh_file_check.h"
#include "scene/ascii_text.h"

#include <array>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string_view>
#include <vector>

namespace rt {

namespace {

constexpr size_t k_sniff_bytes = 4096;

[[noreturn]] void fail(const std::string& reason) { throw std::runtime_error(reason); }

// What the first bytes say; finer than MeshFormat so mismatch messages can be specific.
enum class Content { empty, obj_text, ply, gltf_json, other_json, glb, fbx_binary, fbx_text, binary };

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
std::string printable_bytes(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

// Assimp 5.2's glTF2 importer does strchr(mimeType, '/') + 1 on embedded images and then
// strcmp()s the result: a mimeType without '/' dereferences address 1 (found by mutating
// BoxTextured.glb). Refuse such files before assimp sees them.
void check_gltf_mime_types(std::string_view text) {
  constexpr std::string_view key = "\"mimeType\"";
  for (size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    size_t v = at + key.size();
    while (v < text.size() && (std::isspace(static_cast<unsigned char>(text[v])) || text[v] == ':')) ++v;
    if (v >= text.size() || text[v] != '"') continue;  // not a string: assimp ignores it
    size_t end = text.find('"', v + 1);
    std::string_view value = text.substr(v + 1, end == std::string_view::npos ? std::string_view::npos : end - v - 1);
    if (value.find('/') == std::string_view::npos) {
      fail("glTF image mimeType \"" + printable_bytes(value.substr(0, 64)) + "\" is not of the form type/subtype");
    }
  }
}

}  // namespace

std::string lower_extension(const std::string& path) { return ascii_lower(std::filesystem::path(path).extension().string()); }

MeshFormat check_mesh_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail("file not found");
  if (!fs::is_regular_file(status)) fail("not a regular file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) fail("cannot read file size: " + ec.message());
  if (size > k_max_mesh_file_bytes) fail("file is larger than 2 GiB");

  std::string ext = lower_extension(path);
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

}  // namespace rt
