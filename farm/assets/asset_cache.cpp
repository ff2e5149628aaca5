#include "assets/asset_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <random>
#include <stdexcept>

#include "assets/asset_manifest.h"
#include "assets/cache_write.h"
#include "assets/content_hash.h"

namespace fs = std::filesystem;

namespace farm {

AssetCache::AssetCache(std::string root) : m_root(std::move(root)) {}

std::string AssetCache::object_path(const std::string& hash) const { return (fs::path(m_root) / "objects" / hash).string(); }

bool AssetCache::has(const std::string& hash) const {
  std::error_code ec;
  return is_content_hash(hash) && fs::is_regular_file(object_path(hash), ec);
}

std::vector<std::string> AssetCache::cached_hashes() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(m_root) / "objects", ec)) {
    std::string name = e.path().filename().string();
    if (is_content_hash(name)) out.push_back(name);
  }
  return out;
}

Status AssetCache::probe() const {
  if (Status s = probe_writable_dir((fs::path(m_root) / "objects").string()); !s.ok())
    return Status::error("cannot use the cache folder '" + m_root + "': " + s.message());
  return {};
}

Status AssetCache::verify(const std::string& hash, uint64_t size, const std::vector<uint8_t>& data) {
  if (!is_content_hash(hash)) return Status::error("not a content hash: '" + hash.substr(0, 80) + "'");
  if (data.size() != size)
    return Status::error("asset " + hash + " has " + std::to_string(data.size()) + " bytes; the job said " +
                         std::to_string(size));
  if (content_hash(data) != hash) return Status::error("content does not match its hash " + hash);
  return {};
}

std::optional<std::vector<uint8_t>> AssetCache::read(const std::string& hash) const {
  if (!has(hash)) return std::nullopt;
  return read_file_bytes(object_path(hash));
}

Status AssetCache::store(const std::string& hash, const std::vector<uint8_t>& data) {
  FARM_CHECK(is_content_hash(hash));  // verify() first: a hash is also a file name here
  // The tag keeps processes sharing a cache (local workers, other PID namespaces, other machines
  // on a shared file system) from writing the same temporary file.
  return write_file_via(object_path(hash) + ".tmp." + process_tag(), object_path(hash), data.data(),
                        data.size());
}

std::string AssetCache::materialize(uint64_t job_id, const std::vector<proto::AssetRef>& assets,
                                    const std::string& instance) const {
  // A folder no other process uses: workers on several hosts may share one cache folder, and
  // in PID namespaces (containers, the ssh test hosts) they have the same pid. It was
  // jobs/<job>.<pid>.<n>, emptied first "as a crashed process's leftover": one host's worker
  // emptied another's folder under it. Now a random part makes it new, and it is never reused.
  const fs::path jobs = fs::path(m_root) / "jobs";
  std::error_code ec;
  fs::create_directories(jobs, ec);
  std::random_device random;
  fs::path dir;
  for (int attempt = 0;; ++attempt) {
    char tag[17];
    std::snprintf(tag, sizeof tag, "%08x%08x", random(), random());
    dir = jobs / (std::to_string(job_id) + "." + instance + "." + tag);
    if (fs::create_directory(dir, ec)) break;
    if (ec || attempt == 8) {
      throw std::runtime_error("cannot create " + dir.string() + ": " + (ec ? ec.message() : "it exists"));
    }
  }
  for (const proto::AssetRef& a : assets) {
    if (!is_safe_relative_name(a.name)) throw std::runtime_error("unsafe asset name '" + a.name + "'");
    if (!has(a.hash)) throw std::runtime_error("asset " + a.name + " (" + a.hash + ") is not in the cache");
    fs::path target = dir / a.name;
    fs::create_directories(target.parent_path(), ec);
    fs::create_hard_link(object_path(a.hash), target, ec);
    if (ec) {
      ec.clear();
      fs::copy_file(object_path(a.hash), target, fs::copy_options::overwrite_existing, ec);
      if (ec) throw std::runtime_error("cannot place " + a.name + ": " + ec.message());
    }
  }
  return dir.string();
}

std::string default_cache_dir() {
  if (const char* c = std::getenv("FARM_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/farm";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/farm";
  return "/tmp/farm-cache-" + std::to_string(::getuid());
}

}  // namespace farm
