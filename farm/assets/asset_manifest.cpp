#include "assets/asset_manifest.h"

#include <filesystem>
#include <stdexcept>

#include "assets/content_hash.h"
#include "scene/asset_search.h"

namespace fs = std::filesystem;

namespace farm {

namespace {

// `path` relative to the first search folder that contains it.
std::string relative_name(const std::string& path, const std::vector<std::string>& dirs) {
  // The renderer's rule (rt::name_under_roots), so that what `farm single` reads is what
  // `farm render` ships.
  if (std::optional<std::string> name = rt::name_under_roots(path, dirs)) return *name;
  throw std::invalid_argument("asset '" + path + "' is " + rt::outside_roots_reason(path, dirs) +
                              ", so it cannot be shipped to workers; refer to it relative to an --assets folder");
}

// One asset travels as one message, and workers accept messages up to 1 GiB.
constexpr size_t k_max_asset_bytes = (size_t{1} << 30) - (size_t{1} << 20);

ManifestEntry entry_for(const std::string& path, const std::string& name) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > k_max_asset_bytes) {
    throw std::invalid_argument("'" + path + "' is too large to ship to workers (" + std::to_string(size) +
                                " bytes; at most 1 GiB - 1 MiB)");
  }
  auto bytes = read_file_bytes(path);
  if (!bytes) throw std::runtime_error("cannot read '" + path + "'");
  ManifestEntry e;
  e.path = path;
  e.ref = {content_hash(*bytes), name, bytes->size()};
  return e;
}

}  // namespace

bool is_safe_relative_name(const std::string& name) {
  if (name.empty() || name.size() > 1024 || name.find('\0') != std::string::npos) return false;
  fs::path p(name);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory()) return false;
  for (const auto& part : p)
    if (part == ".." || part == ".") return false;
  return true;
}

std::vector<ManifestEntry> build_manifest(const std::string& scene_path, const rt::SceneDesc& desc,
                                          const rt::AssetSearch& search) {
  std::vector<std::string> dirs = rt::asset_search_dirs(scene_path, search);
  std::vector<ManifestEntry> out;
  out.push_back(entry_for(scene_path, fs::path(scene_path).filename().string()));
  for (const std::string& asset : desc.asset_files) out.push_back(entry_for(asset, relative_name(asset, dirs)));
  return out;
}

}  // namespace farm
