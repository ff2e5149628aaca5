// The worker's content-addressed store of shipped files: objects/<hash> under a cache folder,
// and per job a folder where they appear under their relative names (hard links or copies).
//
// The objects are immutable: stored read-only (0444), and checked against their hash before
// they are reused, because a job folder's hard link is the object itself: a renderer that
// writes a file of its job folder (as root, or after a chmod) would otherwise change every later
// job's copy, with exit 0 and a wrong image. The full hash is computed once per process and
// object; after that a stamp of what was verified (device, inode, size, modification and change
// times) stands for it, and any write moves the change time, which no process can set back
// (docs/failures.md, the worker's cache).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "protocol/protocol.h"

namespace farm {

class AssetCache {
 public:
  // Does not touch the disk: probe() creates the folders and says whether they can be used.
  explicit AssetCache(std::string root);

  // Creates objects/ under the root and writes and removes a small file there (cache_write.h).
  // "cannot use the cache folder 'ROOT': cannot write 'ROOT/objects/.probe.PID.RANDOM': <strerror>".
  Status probe() const;

  enum class Object { absent, intact, changed };
  // Whether objects/<hash> is there and still holds the content of its hash: hashed the first
  // time this process looks at it and whenever its stamp differs from the one last verified. A
  // changed object is removed (`changed` is said once; the next check finds it `absent`), so the
  // worker fetches it again; the caller warns, naming the asset.
  Object check(const std::string& hash) const;
  bool has(const std::string& hash) const { return check(hash) == Object::intact; }
  std::vector<std::string> cached_hashes() const;
  // Whether `data` is what the master said it would send: its hash, and `size` (the manifest's).
  // A failure is the master's (or its link's).
  static Status verify(const std::string& hash, uint64_t size, const std::vector<uint8_t>& data);
  // Stores verified content as objects/<hash>, read-only (0444). A failure is this machine's: the
  // message names the file and the OS reason, and the partial file is gone (cache_write.h).
  Status store(const std::string& hash, const std::vector<uint8_t>& data);
  // The stored content of `hash` (a relay passes it on to its site's workers); empty if it is not
  // stored or cannot be read.
  std::optional<std::vector<uint8_t>> read(const std::string& hash) const;
  // Lays out `assets` under a new folder jobs/<job_id>.<instance>.<random>/ and returns it: hard
  // links to the read-only objects (copies where links cannot be made). Throws
  // std::runtime_error on an unsafe name, an object missing or changed, or a file system error.
  std::string materialize(uint64_t job_id, const std::vector<proto::AssetRef>& assets,
                          const std::string& instance) const;

  const std::string& root() const { return m_root; }

 private:
  // What was verified of an object: any write to its inode changes ctime.
  struct Stamp {
    uint64_t device = 0, inode = 0, size = 0;
    int64_t modified_ns = 0, changed_ns = 0;
    bool operator==(const Stamp& o) const {
      return device == o.device && inode == o.inode && size == o.size && modified_ns == o.modified_ns &&
             changed_ns == o.changed_ns;
    }
  };
  std::string object_path(const std::string& hash) const;
  std::string m_root;
  mutable std::mutex m_mutex;                      // guards m_verified
  mutable std::map<std::string, Stamp> m_verified;  // by hash: objects whose content this process hashed
};

// $FARM_CACHE, else $XDG_CACHE_HOME/farm, else ~/.cache/farm, else /tmp/farm-cache-<uid>.
std::string default_cache_dir();

}  // namespace farm
