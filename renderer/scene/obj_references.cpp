// obj_referenced_files: the MTL files and textures an OBJ needs, found the way files written by
// artists expect (Windows separators, case-insensitive file systems), each reported at the line
// that names it. Parsing lives in obj_statements.cpp; this file resolves names and reads files.
#include "scene/obj_references.h"
#include "scene/ascii_text.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "scene/asset_search.h"
#include "scene/mesh_file_check.h"

namespace fs = std::filesystem;

namespace rt {

namespace {

// A folder's entries beyond this are not considered for case-insensitive matches.
constexpr size_t k_max_listed_entries = 1000000;

std::string absolute_normal_dir(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p.empty() ? fs::path(".") : p, ec);
  std::string s = (ec ? p : abs).lexically_normal().string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// Names come from untrusted files: keep control bytes out of messages, logs and terminals.
std::string printable(std::string_view s) {
  constexpr size_t k_max_shown = 200;
  std::string out(s.substr(0, k_max_shown));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s.size() > k_max_shown ? out + "..." : out;
}

std::string joined(const std::vector<std::string>& dirs) {
  std::string out;
  for (const std::string& d : dirs) out += (out.empty() ? "" : ", ") + d;
  return out;
}

// Finds the file a written name refers to; remembers answers and folder listings, since an MTL
// names the same few textures over and over (Sponza: 74 statements, 20 files).
class Resolver {
 public:
  explicit Resolver(const std::vector<std::string>& extra_dirs) {
    for (const std::string& d : extra_dirs) {
      if (!d.empty()) m_extra_dirs.push_back(absolute_normal_dir(d));
    }
  }

  // The naming file's folder, then the extra folders (without repeats).
  std::vector<std::string> dirs_for(const std::string& naming_file) const {
    std::vector<std::string> dirs{absolute_normal_dir(fs::path(naming_file).parent_path())};
    for (const std::string& d : m_extra_dirs) {
      if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
    }
    return dirs;
  }

  std::optional<std::string> find(const std::string& name, const std::vector<std::string>& dirs) {
    // A NUL would cut the name short in the system calls and find some other file.
    if (name.empty() || name.find('\0') != std::string::npos) return std::nullopt;
    std::string key = dirs.front() + '\0' + name;  // the other folders are the same for every name
    auto memo = m_found.find(key);
    if (memo != m_found.end()) return memo->second;
    std::string slashed = name;
    std::replace(slashed.begin(), slashed.end(), '\\', '/');
    std::optional<std::string> found = find_asset(name, dirs);
    if (!found && slashed != name) found = find_asset(slashed, dirs);
    if (!found) found = find_ignoring_case(slashed, dirs);
    return m_found[key] = found;
  }

  // Where `name` was looked for, for messages.
  static std::vector<std::string> looked_in(const std::string& name, const std::vector<std::string>& dirs) {
    fs::path p(name);
    if (p.is_absolute()) return {absolute_normal_dir(p.parent_path())};
    return dirs;
  }

 private:
  // The folder part must match exactly; the file name may differ in (ASCII) case.
  std::optional<std::string> find_ignoring_case(const std::string& name, const std::vector<std::string>& dirs) {
    fs::path p(name);
    std::string file = p.filename().string();
    if (file.empty() || file == "." || file == "..") return std::nullopt;
    std::vector<std::string> folders = p.is_absolute() ? std::vector<std::string>{""} : dirs;
    for (const std::string& dir : folders) {
      fs::path folder = (dir.empty() ? fs::path() : fs::path(dir)) / p.parent_path();
      for (const std::string& entry : listing(folder.string())) {
        if (ascii_lower(entry) != ascii_lower(file)) continue;
        if (std::optional<std::string> found = find_asset((folder / entry).string(), {})) return found;
      }
    }
    return std::nullopt;
  }

  // The folder's entry names, sorted so that the choice among "a.JPG" and "A.jpg" is stable.
  const std::vector<std::string>& listing(const std::string& folder) {
    auto cached = m_listings.find(folder);
    if (cached != m_listings.end()) return cached->second;
    std::vector<std::string>& names = m_listings[folder];
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end && names.size() < k_max_listed_entries;
         it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  std::vector<std::string> m_extra_dirs;
  std::map<std::string, std::optional<std::string>> m_found;
  std::map<std::string, std::vector<std::string>> m_listings;
};

// Parsing errors carry the reason only; they are reported at the file they come from.
template <class Parse>
auto located(const std::string& file, Parse parse) {
  try {
    return parse();
  } catch (const SceneError&) {
    throw;
  } catch (const std::exception& e) {
    throw SceneError(file + ": " + e.what());
  }
}

[[noreturn]] void not_found(const SourceLoc& at, const std::string& what, const std::string& name,
                            const std::vector<std::string>& dirs) {
  throw SceneError(at.str() + ": " + what + " not found; looked in: " + joined(Resolver::looked_in(name, dirs)));
}

std::string read_mtl(const std::string& path, const SourceLoc& named_at) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (ec || !in) throw SceneError(named_at.str() + ": cannot read MTL file '" + path + "'");
  if (size > k_max_mtl_file_bytes) {
    throw SceneError(named_at.str() + ": MTL file '" + path + "' is larger than 64 MiB (" + std::to_string(size) +
                     " bytes)");
  }
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

class Collector {
 public:
  Collector(const std::vector<std::string>& extra_dirs, const std::vector<std::string>& roots)
      : m_resolver(extra_dirs), m_roots(roots) {}

  void scan_obj(const std::string& obj) {
    std::error_code ec;
    if (!fs::is_regular_file(obj, ec)) throw SceneError("cannot read OBJ '" + obj + "': not an existing regular file");
    uint64_t size = fs::file_size(obj, ec);
    if (ec || size > k_max_mesh_file_bytes) throw SceneError("cannot read OBJ '" + obj + "': larger than 2 GiB");
    std::ifstream in(obj, std::ios::binary);
    if (!in) throw SceneError("cannot read OBJ '" + obj + "': cannot open file");
    std::vector<ObjMtllibStatement> statements = located(obj, [&] { return scan_obj_mtllib_statements(in); });
    if (in.bad()) throw SceneError("cannot read OBJ '" + obj + "': read error");
    std::vector<std::string> dirs = m_resolver.dirs_for(obj);
    for (const ObjMtllibStatement& s : statements) add_mtllib(obj, s, dirs);
  }

  std::vector<FileReference> take() { return std::move(m_out); }

 private:
  // "mtllib a.mtl b.mtl" names two files, but "mtllib my materials.mtl" may name one.
  void add_mtllib(const std::string& obj, const ObjMtllibStatement& s, const std::vector<std::string>& dirs) {
    if (s.words.size() > 1) {
      if (std::optional<std::string> whole = m_resolver.find(s.whole.text, dirs)) {
        add_mtl(*whole, {obj, s.line, s.whole.column});
        return;
      }
    }
    for (const WrittenName& w : s.words) {
      SourceLoc at{obj, s.line, w.column};
      std::optional<std::string> found = m_resolver.find(w.text, dirs);
      if (!found) not_found(at, "mtllib '" + printable(w.text) + "'", w.text, dirs);
      add_mtl(*found, at);
    }
  }

  void add_mtl(const std::string& path, const SourceLoc& at) {
    if (!m_roots.empty()) {
      if (std::string why = outside_roots_reason(path, m_roots); !why.empty()) {
        throw SceneError(at.str() + ": mtllib file '" + path + "' is " + why + "; refusing to read it");
      }
    }
    if (!add({path, "mtllib", at})) return;
    std::string text = read_mtl(path, at);
    std::vector<MtlTextureStatement> statements = located(path, [&] { return parse_mtl_texture_statements(text); });
    std::vector<std::string> dirs = m_resolver.dirs_for(path);
    for (const MtlTextureStatement& t : statements) {
      SourceLoc from{path, t.line, t.column};
      std::optional<std::string> found = m_resolver.find(t.file_name, dirs);
      if (!found) not_found(from, "texture '" + printable(t.file_name) + "' (" + t.keyword + ")", t.file_name, dirs);
      add({*found, t.keyword, from});
    }
  }

  // False if the file is listed already.
  bool add(FileReference ref) {
    if (!m_listed.insert(ref.path).second) return false;
    m_out.push_back(std::move(ref));
    return true;
  }

  Resolver m_resolver;
  std::vector<std::string> m_roots;  // empty: no rule (the caller checks)
  std::vector<FileReference> m_out;
  std::set<std::string> m_listed;
};

}  // namespace

std::vector<FileReference> obj_referenced_files(const std::string& obj_path,
                                                const std::vector<std::string>& extra_dirs,
                                                const std::vector<std::string>& roots) {
  Collector collector(extra_dirs, roots);
  collector.scan_obj(fs::path(obj_path).is_absolute() ? fs::path(obj_path).lexically_normal().string()
                                                      : absolute_normal_dir(obj_path));
  return collector.take();
}

}  // namespace rt
