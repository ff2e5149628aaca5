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

std::optional<std::string> name_under_roots(const std::string& path, const std::vector<std::string>& roots) {
  const fs::path p = absolute_normal(path);
  for (const std::string& root : roots) {
    fs::path rel = p.lexically_relative(absolute_normal(root));
    if (rel.empty() || rel == ".") continue;
    if (*rel.begin() == "..") continue;
    return rel.string();
  }
  return std::nullopt;
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
