// The worker's content-addressed store of shipped files: objects/<hash> under a cache folder,
// and per job a folder where they appear under their relative names (hard links or copies).
#pragma once

#include <cstdint>
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

  bool has(const std::string& hash) const;
  std::vector<std::string> cached_hashes() const;
  // Whether `data` is what the master said it would send: its hash, and `size` (the manifest's).
  // A failure is the master's (or its link's).
  static Status verify(const std::string& hash, uint64_t size, const std::vector<uint8_t>& data);
  // Stores verified content as objects/<hash>. A failure is this machine's: the message names
  // the file and the OS reason, and the partial file is gone (cache_write.h).
  Status store(const std::string& hash, const std::vector<uint8_t>& data);
  // The stored content of `hash` (a relay passes it on to its site's workers); empty if it is not
  // stored or cannot be read.
  std::optional<std::vector<uint8_t>> read(const std::string& hash) const;
  // Lays out `assets` under a new folder jobs/<job_id>.<instance>.<random>/ and returns it. Throws
  // std::runtime_error on an unsafe name, a missing object or a file system error.
  std::string materialize(uint64_t job_id, const std::vector<proto::AssetRef>& assets,
                          const std::string& instance) const;

  const std::string& root() const { return m_root; }

 private:
  std::string object_path(const std::string& hash) const;
  std::string m_root;
};

// $FARM_CACHE, else $XDG_CACHE_HOME/farm, else ~/.cache/farm, else /tmp/farm-cache-<uid>.
std::string default_cache_dir();

}  // namespace farm
