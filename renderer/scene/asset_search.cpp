#include "scene/asset_search.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace rt {

namespace {

std::string absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  std::string s = abs.lexically_normal().string();
  // "dir/" and "dir" are the same folder; keep one spelling so de-duplication works.
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

void add_dir(std::vector<std::string>& dirs, const fs::path& dir) {
  std::string d = absolute_normal(dir);
  if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
}

bool is_file(const fs::path& p) {
  std::error_code ec;  // unreadable folders count as "not there" rather than throwing
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::vector<std::string> asset_search_dirs(const std::string& scene_path, const AssetSearch& search) {
  std::vector<std::string> dirs;
  fs::path scene_dir = fs::path(scene_path).parent_path();
  add_dir(dirs, scene_dir.empty() ? fs::path(".") : scene_dir);
  for (const std::string& d : search.dirs)
    if (!d.empty()) add_dir(dirs, d);
  if (const char* env = std::getenv("FARM_ASSETS")) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t end = list.find(':', start);
      if (end == std::string::npos) end = list.size();
      if (end > start) add_dir(dirs, list.substr(start, end - start));
      start = end + 1;
    }
  }
  return dirs;
}

namespace {

// `p` relative to the first root that holds it, judged on the spelling alone.
std::optional<std::string> lexical_name(const fs::path& p, const std::vector<std::string>& roots, bool resolve_roots) {
  for (const std::string& root : roots) {
    std::error_code ec;
    const fs::path r = resolve_roots ? fs::weakly_canonical(absolute_normal(root), ec) : fs::path(absolute_normal(root));
    fs::path rel = p.lexically_relative(ec ? fs::path(absolute_normal(root)) : r);
    if (rel.empty() || rel == ".") continue;
    if (*rel.begin() == "..") continue;
    return rel.string();
  }
  return std::nullopt;
}

// Where `path` really is once symbolic links are followed (itself if that cannot be known).
fs::path real_path(const fs::path& p) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(p, ec);
  return ec ? p : real;
}

}  // namespace

std::optional<std::string> name_under_roots(const std::string& path, const std::vector<std::string>& roots) {
  const fs::path p = absolute_normal(path);
  std::optional<std::string> name = lexical_name(p, roots, false);
  if (!name) return std::nullopt;
  // A symbolic link inside the folders must not lead out of them: `single` would read, and the
  // master ship to its workers, whatever it points at (~/.ssh/id_rsa from a downloaded scene).
  if (!lexical_name(real_path(p), roots, true)) return std::nullopt;
  return name;
}

std::string outside_roots_reason(const std::string& path, const std::vector<std::string>& roots) {
  const fs::path p = absolute_normal(path);
  if (!lexical_name(p, roots, false)) {
    return "outside the scene's folder and every asset folder (--assets, FARM_ASSETS)";
  }
  if (!lexical_name(real_path(p), roots, true)) {
    return "a symbolic link to '" + real_path(p).string() +
           "', outside the scene's folder and every asset folder (--assets, FARM_ASSETS)";
  }
  return "";
}

std::optional<std::string> find_asset(const std::string& path, const std::vector<std::string>& dirs) {
  if (path.empty()) return std::nullopt;
  fs::path p(path);
  if (p.is_absolute()) {
    if (is_file(p)) return absolute_normal(p);
    return std::nullopt;
  }
  for (const std::string& dir : dirs) {
    fs::path candidate = fs::path(dir) / p;
    if (is_file(candidate)) return absolute_normal(candidate);
  }
  return std::nullopt;
}

}  // namespace rt
