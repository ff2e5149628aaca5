#include "scene/gltf/gltf_document.h"

#include <tiny_gltf.h>

#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "math/checked.h"
#include "scene/gltf/gltf_integer_check.h"
#include "scene/asset_search.h"
#include "scene/mesh_file_check.h"

namespace fs = std::filesystem;

namespace rt {

namespace {

bool is_regular_file_of_bounded_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_size) <= k_max_mesh_file_bytes;
}

// What tinygltf's file callbacks need to judge a path: tinygltf joins the document's folder
// and the decoded URI itself, then tries the same URI in the working directory.
struct FileRules {
  std::string dir;                 // the document's folder, as tinygltf spells it
  std::vector<std::string> roots;  // where its files may lie (empty: checked by the caller)
  std::string refusal;             // the first path refused, for the message
};

// Empty if tinygltf may read `path`, else why not.
std::string refusal_for(const std::string& path, const FileRules& rules) {
  const std::string prefix = rules.dir + "/";
  if (path.compare(0, prefix.size(), prefix) != 0) {
    return "'" + path + "' is not in the glTF file's folder";  // the working-directory retry
  }
  const std::string uri = path.substr(prefix.size());
  if (fs::path(uri).is_absolute()) {
    return "URI '" + uri + "' is an absolute path; glTF files must refer to their files relatively";
  }
  return outside_roots_message(uri, (fs::path(rules.dir) / uri).lexically_normal().string(), rules.roots);
}

// The file tinygltf's `path` (the folder + "/" + the decoded URI) names, lexically: the path
// judged by refusal_for, listed as the job's asset (list_references, resolve_gltf_uri) and read
// are one. Left to the OS, "sub/../x.bin" needed a folder `sub` (which a worker's copy of the
// job, holding files only, lacks), and a `sub` that is a link led elsewhere than was judged.
std::string lexical(const std::string& path) { return fs::path(path).lexically_normal().string(); }

bool file_exists(const std::string& path, void* user) {
  auto* rules = static_cast<FileRules*>(user);
  if (std::string why = refusal_for(path, *rules); !why.empty()) {
    // The working-directory retry comes second: keep the reason of the first try.
    if (rules->refusal.empty()) rules->refusal = why;
    return false;
  }
  const std::string file = lexical(path);
  if (!is_regular_file_of_bounded_size(file)) {
    // The first try is the document's folder: say what is missing there, not why the
    // working-directory retry after it was refused.
    if (rules->refusal.empty()) {
      struct stat st {};
      rules->refusal = ::stat(file.c_str(), &st) != 0 ? "'" + file + "' not found"
                       : S_ISREG(st.st_mode)          ? "'" + file + "' is larger than 2 GiB"
                                                      : "'" + file + "' is not a regular file";
    }
    return false;
  }
  return true;
}

// tinygltf's default expands "~" and environment variables with wordexp(); a file we did not
// write has no business naming either.
std::string expand_nothing(const std::string& path, void*) { return path; }

bool read_whole_file(std::vector<unsigned char>* out, std::string* err, const std::string& tinygltf_path, void* user) {
  const std::string path = lexical(tinygltf_path);
  if (!refusal_for(tinygltf_path, *static_cast<FileRules*>(user)).empty() || !is_regular_file_of_bounded_size(path)) {
    if (err) *err += "cannot read '" + path + "' (missing, not a regular file, or larger than 2 GiB)\n";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  in.seekg(0);
  out->resize(size);
  if (size > 0) in.read(reinterpret_cast<char*>(out->data()), static_cast<std::streamsize>(size));
  return static_cast<bool>(in);
}

// The document's JSON: the whole .gltf, or the first chunk of a .glb (read alone: the binary
// chunk after it may be large). Empty if unreadable: tinygltf then reports why.
std::string json_text_of(const std::string& path, MeshFormat format) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (format == MeshFormat::glb) {
    char header[20];
    if (!in.read(header, sizeof header)) return {};
    uint32_t length;
    std::memcpy(&length, header + 12, 4);
    if (length > k_max_mesh_file_bytes) return {};
    text.assign(header, sizeof header);
    text.resize(sizeof header + length);
    if (!in.read(text.data() + sizeof header, length)) return {};
    return std::string(glb_json_chunk(text));
  }
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return text;
}

bool refuse_write(std::string* err, const std::string&, const std::vector<unsigned char>&, void*) {
  if (err) *err += "writing is not allowed\n";
  return false;
}

// tinygltf 2.7 hands an image stored in a bufferView over as &buffer[view.byteOffset] with
// view.byteLength bytes, without checking that the view lies inside the buffer (a GLB whose
// view runs past its BIN chunk made us copy beyond the heap block: found by fuzz_gltf). The
// model being loaded already holds its buffers and views at that point, so check here.
bool image_view_in_bounds(const tinygltf::Model& model, int view_index, std::string* err) {
  if (view_index < 0) return true;  // a URI, not a view
  if (view_index >= static_cast<int>(model.bufferViews.size())) {
    if (err) *err += "an image refers to bufferView " + std::to_string(view_index) + ", which does not exist\n";
    return false;
  }
  const tinygltf::BufferView& view = model.bufferViews[view_index];
  if (view.buffer < 0 || view.buffer >= static_cast<int>(model.buffers.size()) ||
      !range_fits(view.byteOffset, view.byteLength, model.buffers[view.buffer].data.size())) {
    if (err) *err += "image bufferView " + std::to_string(view_index) + " runs past the end of its buffer\n";
    return false;
  }
  return true;
}

// Images are not decoded here (OpenImageIO does that, lazily): embedded ones keep their raw
// bytes in Image::image for gltf_materials.cpp; external ones only their URI.
bool keep_image_bytes(tinygltf::Image* image, const int, std::string* err, std::string*, int, int,
                      const unsigned char* bytes, int size, void* model) {
  if (!image_view_in_bounds(*static_cast<const tinygltf::Model*>(model), image->bufferView, err)) return false;
  bool embedded = image->uri.empty() || image->uri.rfind("data:", 0) == 0;
  if (embedded && bytes && size > 0) image->image.assign(bytes, bytes + size);
  image->width = image->height = -1;
  return true;
}

void check_no_required_unknown_extensions(const tinygltf::Model& m) {
  static const std::vector<std::string> supported = {
      "KHR_lights_punctual", "KHR_materials_emissive_strength", "KHR_texture_transform", "KHR_materials_transmission",
      "KHR_materials_ior"};
  for (const std::string& ext : m.extensionsRequired) {
    if (std::find(supported.begin(), supported.end(), ext) == supported.end()) {
      throw GltfError("the file requires the extension " + ext + ", which this renderer does not support");
    }
  }
}

void list_references(GltfDocument& doc, const std::vector<std::string>& roots) {
  auto add = [&](const std::string& uri) {
    if (uri.empty() || uri.rfind("data:", 0) == 0) return;
    std::string path = resolve_gltf_uri(doc.dir, uri);
    if (std::string why = outside_roots_message(uri, path, roots); !why.empty()) throw GltfError(why);
    if (!is_regular_file_of_bounded_size(path)) throw GltfError("file '" + uri + "' not found (looked for " + path + ")");
    if (std::find(doc.referenced_files.begin(), doc.referenced_files.end(), path) == doc.referenced_files.end()) {
      doc.referenced_files.push_back(path);
    }
  };
  for (const tinygltf::Buffer& b : doc.model->buffers) add(b.uri);
  for (const tinygltf::Image& i : doc.model->images) add(i.uri);
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string outside_roots_message(const std::string& uri, const std::string& path, const std::vector<std::string>& roots) {
  if (roots.empty()) return {};
  const std::string why = outside_roots_reason(path, roots);
  return why.empty() ? why : "URI '" + uri + "' leads to '" + path + "', " + why + "; refusing to read it";
}

GltfDocument::GltfDocument() = default;
GltfDocument::GltfDocument(GltfDocument&&) noexcept = default;
GltfDocument::~GltfDocument() = default;

std::string resolve_gltf_uri(const std::string& doc_dir, const std::string& uri) {
  std::string decoded = percent_decode(uri);
  if (decoded.find('\0') != std::string::npos) throw GltfError("URI '" + uri + "' contains a NUL byte");
  size_t colon = decoded.find(':');
  size_t slash = decoded.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash)) {
    throw GltfError("URI '" + uri + "' is not a relative file name (only relative paths and data: URIs are read)");
  }
  fs::path p(decoded);
  if (p.is_absolute() || p.has_root_name()) {
    throw GltfError("URI '" + uri + "' is an absolute path; glTF files must refer to their files relatively");
  }
  return (fs::path(doc_dir) / p).lexically_normal().string();
}

GltfDocument read_gltf_document(const std::string& path, const std::vector<std::string>& roots) {
  MeshFormat format = check_mesh_file(path);  // regular file, size, GLB header, mime types
  GltfDocument doc;
  doc.path = fs::absolute(path).lexically_normal().string();
  check_gltf_integers(json_text_of(doc.path, format));
  doc.dir = fs::path(doc.path).parent_path().string();
  doc.model = std::make_unique<tinygltf::Model>();
  tinygltf::TinyGLTF loader;
  loader.SetImageLoader(keep_image_bytes, doc.model.get());
  // A file next to (or below) the glTF file is always its own; beyond that, only the roots.
  std::vector<std::string> allowed = roots;
  if (!allowed.empty()) allowed.push_back(doc.dir);
  FileRules rules{doc.dir, allowed, {}};
  loader.SetFsCallbacks({file_exists, expand_nothing, read_whole_file, refuse_write, &rules});
  std::string err, warn;
  bool ok = false;
  try {
    ok = format == MeshFormat::glb ? loader.LoadBinaryFromFile(doc.model.get(), &err, &warn, doc.path)
                                   : loader.LoadASCIIFromFile(doc.model.get(), &err, &warn, doc.path);
  } catch (const std::bad_alloc&) {
    throw GltfError("out of memory while parsing");
  } catch (const std::exception& e) {
    throw GltfError(std::string("parse error: ") + e.what());
  }
  if (!ok) {
    // tinygltf says only "File not found" for a file our rules refused to show it.
    if (!rules.refusal.empty()) throw GltfError(rules.refusal);
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    throw GltfError(err.empty() ? "tinygltf could not parse the file" : err);
  }
  check_no_required_unknown_extensions(*doc.model);
  list_references(doc, allowed);
  return doc;
}

}  // namespace rt
