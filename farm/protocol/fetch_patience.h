// How long a peer that asked for the job's files (a worker, a relay) waits for them beyond the
// liveness window before it calls its master silent. The master's heartbeats travel on the same
// connection, queued behind the files: a large asset over a slow link looks like silence, and
// reconnecting would only start the same transfer again (a 6 MB texture over a shared 20 Mbit/s
// site link did). Each file that arrives counts as hearing from the master, so the allowance is
// for the largest file still missing, at 1 Mbit/s, and at most 10 minutes: a dead master is still
// noticed, later.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "protocol/protocol.h"

namespace farm::proto {

inline constexpr double k_slowest_link_bytes_per_second = 1e6 / 8;
inline constexpr double k_max_fetch_patience_seconds = 600;

// Seconds to allow for the next of the files of `assets` still `missing`.
inline double fetch_patience(const std::vector<AssetRef>& assets, const std::set<std::string>& missing) {
  uint64_t largest = 0;
  for (const AssetRef& a : assets)
    if (missing.count(a.hash)) largest = std::max(largest, a.size);
  return std::min(k_max_fetch_patience_seconds, static_cast<double>(largest) / k_slowest_link_bytes_per_second);
}

}  // namespace farm::proto
