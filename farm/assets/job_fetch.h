// The files of the job a participant (a worker, a relay) was welcomed to, as its upstream
// session fetches them: which ones its cache lacks (a cached copy found changed is removed and
// fetched again: something wrote to it), and each one that arrives verified against the hash and
// size the Welcome promised before it is stored. Written once for the worker and the relay.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "assets/asset_cache.h"
#include "base/status.h"
#include "protocol/protocol.h"

namespace farm {

class JobFetch {
 public:
  JobFetch() = default;
  // Checks `cache` for every asset of the job; `log_prefix` starts the warning for a changed copy.
  JobFetch(AssetCache& cache, std::vector<proto::AssetRef> assets, const std::string& log_prefix = "");

  const std::set<std::string>& missing() const { return m_missing; }
  bool complete() const { return m_missing.empty(); }
  // The request for every missing asset.
  proto::AssetRequest request() const { return proto::AssetRequest{{m_missing.begin(), m_missing.end()}}; }
  // Seconds of silence its missing files may cost the link to wait (protocol/fetch_patience.h).
  double patience() const;

  enum class Outcome {
    ignored,       // not one this job is missing (a repeat, or another job's): dropped
    stored,        // verified and in the cache; complete() says if it was the last
    bad_asset,     // not what the Welcome promised (hash or size): the sender is at fault
    cannot_store,  // this machine's cache cannot take it (disk full): the partial file is removed
  };
  // `error` is set for bad_asset and cannot_store.
  Outcome receive(const proto::AssetData& asset, Status& error);

 private:
  AssetCache* m_cache = nullptr;
  std::vector<proto::AssetRef> m_assets;
  std::set<std::string> m_missing;
};

}  // namespace farm
