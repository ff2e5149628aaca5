#include "assets/job_fetch.h"

#include <spdlog/spdlog.h>

#include "protocol/fetch_patience.h"

namespace farm {

JobFetch::JobFetch(AssetCache& cache, std::vector<proto::AssetRef> assets, const std::string& log_prefix)
    : m_cache(&cache), m_assets(std::move(assets)) {
  for (const proto::AssetRef& a : m_assets) {
    const AssetCache::Object cached = cache.check(a.hash);
    if (cached == AssetCache::Object::changed) {
      spdlog::warn("{}the cached copy of asset '{}' ({}) no longer matches its hash: something wrote to it (a renderer "
                   "through an earlier job's folder?); it was removed and is fetched again from the master",
                   log_prefix, a.name, a.hash);
    }
    if (cached != AssetCache::Object::intact) m_missing.insert(a.hash);
  }
}

double JobFetch::patience() const { return proto::fetch_patience(m_assets, m_missing); }

JobFetch::Outcome JobFetch::receive(const proto::AssetData& asset, Status& error) {
  if (!m_cache || !m_missing.count(asset.hash)) return Outcome::ignored;
  uint64_t size = 0;
  for (const proto::AssetRef& a : m_assets)
    if (a.hash == asset.hash) size = a.size;
  if (Status valid = AssetCache::verify(asset.hash, size, asset.data); !valid.ok()) {
    error = valid;
    return Outcome::bad_asset;
  }
  if (Status stored = m_cache->store(asset.hash, asset.data); !stored.ok()) {
    error = stored;
    return Outcome::cannot_store;
  }
  m_missing.erase(asset.hash);
  return Outcome::stored;
}

}  // namespace farm
