#include "session/upstream_link.h"

#include <algorithm>

namespace farm {

UpstreamLink::UpstreamLink(UpstreamLinkOptions options, double now)
    : m_o(options), m_last_heard(now), m_heard_since(now) {}

void UpstreamLink::said_hello(double now) { m_last_hello = now; }

void UpstreamLink::joined(double now) { m_last_hello = m_last_heard = now; }

void UpstreamLink::heard(double now) {
  m_last_heard = m_heard_since = now;
  m_backoff = 1.0;
}

std::optional<uint64_t> UpstreamLink::ping_due(double now, double interval) {
  if (m_last_ping >= 0 && now - m_last_ping < interval) return std::nullopt;
  if (!m_o.ping_while_heard && now - m_last_heard < interval) return std::nullopt;
  m_last_ping = now;
  return ++m_ping_sequence;
}

std::optional<double> UpstreamLink::pong(uint64_t sequence, double now) const {
  if (sequence != m_ping_sequence || m_last_ping < 0) return std::nullopt;
  return now - m_last_ping;
}

LinkDecision UpstreamLink::check(double now, double interval, double liveness, double patience) {
  LinkDecision d;
  d.silent_for = now - m_last_heard;
  const double allowance = interval * (liveness + 1) + patience;
  d.silent = d.silent_for > allowance;
  if (!d.silent) {
    if (m_last_hello < 0) {  // rejoin_now(): a fresh socket, with a whole allowance of silence
      d.reconnect = true;
      m_last_hello = m_last_heard = now;
    }
    d.unheard_for = unheard_for(now);
    return d;
  }
  if (m_o.can_fall_back && now - m_heard_since > k_fallback_rounds * allowance) {
    d.fall_back = true;
    m_o.can_fall_back = false;
    m_heard_since = now;  // the fallback gets its own give_up_after
    m_backoff = 1.0;
    m_last_hello = -1;  // at once
  }
  d.unheard_for = unheard_for(now);
  if (give_up_due(now)) {
    d.give_up = true;
    return d;
  }
  if (m_last_hello < 0 || now - m_last_hello >= m_backoff) {
    d.reconnect = true;
    m_last_hello = now;
    m_backoff = std::min(m_o.max_backoff, m_backoff * 2);
    m_last_heard = now - interval * liveness;  // one more period before the next attempt
  }
  return d;
}

}  // namespace farm
