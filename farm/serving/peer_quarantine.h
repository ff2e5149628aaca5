// Bad messages per peer, and the quarantine of peers that send too many: a peer (ZeroMQ
// routing identity) past the limit is cut off and its frames are dropped unread from then on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "scheduler/scheduler_types.h"

namespace farm {

class PeerQuarantine {
 public:
  // Far above what an honest worker can produce (a stale result or two after being declared
  // dead), low enough that a flood costs the master a few hundred decodes before its frames are
  // dropped unread.
  static constexpr uint64_t k_limit = 100;
  // Bad-message counts are kept for at most this many identities (each reconnection is a new
  // one); past it the counts, not the quarantines, are forgotten, bounding the master's memory.
  static constexpr size_t k_max_tracked_peers = 100000;

  // Counts one bad message of `identity`; returns how many bad messages all peers sent so far.
  uint64_t count(const std::string& identity);
  // If `identity` just went past the limit: quarantines it and returns its bad-message count
  // (the caller cuts it off: `worker` is recorded, 0 if it never joined).
  std::optional<uint64_t> due(const std::string& identity);
  void set_worker(const std::string& identity, WorkerId worker);
  bool contains(const std::string& identity) const { return m_quarantined.count(identity) != 0; }
  // One of its frames was read and thrown away.
  void dropped_frame(const std::string& identity);

  uint64_t bad_messages() const { return m_bad_messages; }
  uint64_t dropped_frames() const { return m_dropped_frames; }
  size_t size() const { return m_quarantined.size(); }
  // [{"worker": ID or 0 if it never joined, "bad_messages": N, "dropped_frames": N}, ...]
  std::string json() const;

 private:
  struct Quarantined {
    WorkerId worker = 0;  // 0: it never joined
    uint64_t bad_messages = 0;
    uint64_t dropped_frames = 0;
  };
  std::map<std::string, uint64_t> m_bad_by_peer;
  std::map<std::string, Quarantined> m_quarantined;
  uint64_t m_bad_messages = 0;
  uint64_t m_dropped_frames = 0;
};

}  // namespace farm
