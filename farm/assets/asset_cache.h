// The worker's content-addressed store of shipped files: objects/<hash> under a cache folder,
// and per job a folder where they appear under their relative names (hard links or copies).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "protocol/protocol.h"

namespace farm {

class AssetCache {
 public:
  explicit AssetCache(std::string root);

  bool has(const std::string& hash) const;
  std::vector<std::string> cached_hashes() const;
  // Verifies the content against `hash` before storing. Returns an error message or "".
  Status put(const std::string& hash, const std::vector<uint8_t>& data);
  // Lays out `assets` under jobs/<job_id>.<instance>/ and returns that folder. Throws
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
