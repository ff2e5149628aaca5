#include "serving/peer_quarantine.h"

#include "base/json_text.h"

namespace farm {

uint64_t PeerQuarantine::count(const std::string& identity) {
  ++m_bad_messages;
  if (m_bad_by_peer.size() >= k_max_tracked_peers && !m_bad_by_peer.count(identity)) m_bad_by_peer.clear();
  ++m_bad_by_peer[identity];
  return m_bad_messages;
}

std::optional<uint64_t> PeerQuarantine::due(const std::string& identity) {
  auto bad = m_bad_by_peer.find(identity);
  if (bad == m_bad_by_peer.end() || bad->second <= k_limit || m_quarantined.count(identity)) return std::nullopt;
  const uint64_t n = bad->second;
  m_quarantined[identity].bad_messages = n;
  m_bad_by_peer.erase(bad);
  return n;
}

void PeerQuarantine::set_worker(const std::string& identity, WorkerId worker) {
  auto q = m_quarantined.find(identity);
  if (q != m_quarantined.end()) q->second.worker = worker;
}

void PeerQuarantine::dropped_frame(const std::string& identity) {
  auto q = m_quarantined.find(identity);
  if (q != m_quarantined.end()) ++q->second.dropped_frames;
  ++m_dropped_frames;
}

std::string PeerQuarantine::json() const {
  std::string s = "[";
  for (const auto& [identity, q] : m_quarantined) {
    s += std::string(s.size() > 1 ? ", " : "") + "{" + json_field("worker", q.worker) + ", " +
         json_field("bad_messages", q.bad_messages) + ", " + json_field("dropped_frames", q.dropped_frames) + "}";
  }
  return s + "]";
}

}  // namespace farm
