#include "assets/asset_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
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

namespace {

constexpr mode_t k_object_mode = 0444;  // no job folder can be written through a link to an object

}  // namespace

AssetCache::Object AssetCache::check(const std::string& hash) const {
  if (!is_content_hash(hash)) return Object::absent;
  const std::string path = object_path(hash);
  auto stamp_of = [](const struct stat& st) {
    return Stamp{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                 int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
                 int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec};
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Object::absent;
  std::lock_guard<std::mutex> lock(m_mutex);
  if (auto known = m_verified.find(hash); known != m_verified.end() && known->second == stamp_of(st)) return Object::intact;
  // Hashed, not trusted: it may have been written since another process (or this one) verified
  // it. One pass over the file, paid once per process and object, not once per job.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Object::absent;  // removed meanwhile (another worker found it changed)
  struct stat opened {};
  std::optional<std::string> found;
  if (::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode)) found = content_hash_of_file(fd);
  ::close(fd);
  if (found && *found == hash) {
    // Objects stored by an older farm were writable: make them read-only too. The chmod moves
    // the change time, so the stamp is taken after it.
    if ((opened.st_mode & 07777) != k_object_mode) (void)::chmod(path.c_str(), k_object_mode);
    if (::stat(path.c_str(), &st) == 0 && st.st_ino == opened.st_ino && st.st_dev == opened.st_dev) {
      m_verified[hash] = stamp_of(st);
    }
    return Object::intact;
  }
  // Changed (or unreadable): thrown away, so the worker fetches it again from the master. Only
  // the file that was hashed: another worker sharing the cache may have stored a good one since.
  m_verified.erase(hash);
  if (::stat(path.c_str(), &st) == 0 && st.st_ino == opened.st_ino && st.st_dev == opened.st_dev) ::unlink(path.c_str());
  return Object::changed;
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
  return write_file_via(object_path(hash) + ".tmp." + process_tag(), object_path(hash), data.data(), data.size(),
                        k_object_mode);
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
    if (!has(a.hash)) {
      throw std::runtime_error("asset " + a.name + " (" + a.hash + ") is not in the cache, or changed since it was stored");
    }
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
