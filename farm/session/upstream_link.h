// The timing of a participant's link to the process above it: a worker's to its master (or its
// relay), a relay's to its master. Heartbeats, silence, reconnect with a doubling backoff, the
// one fallback of a worker behind a relay, giving up. One logic for both, pure: time is an
// argument (seconds on the participant's clock), so its decisions are tested on synthetic time as
// the scheduler's are (tests/farm/session), and the worker and the relay only do what it says.
#pragma once

#include <cstdint>
#include <optional>

namespace farm {

// A reconnect backs off from 1 s, doubling up to this.
constexpr double k_max_reconnect_backoff = 32.0;
// A worker behind a relay falls back to the master after this many liveness periods of silence
// (about 12 s at the defaults): three times what declares a master gone, so a relay busy for a
// few seconds keeps its workers, and one that is gone loses them soon after the master takes
// its leases back.
constexpr double k_fallback_rounds = 3;

struct UpstreamLinkOptions {
  double max_backoff = k_max_reconnect_backoff;
  double give_up_after = 0;    // > 0: give up after this long without hearing from above
  bool can_fall_back = false;  // a fallback endpoint exists (used once)
  // Ping every interval even while the master's own pings arrive: a relay does, for the round
  // trip it sizes its spare and its copies by. A worker pings only a master it has not heard
  // from for an interval (one that restarted and no longer knows it answers "send Hello"): in
  // steady state one heartbeat goes each way, the master's ping and the worker's answer.
  bool ping_while_heard = true;
};

// What to do at a check (see UpstreamLink::check). In the order the caller acts on them.
struct LinkDecision {
  bool silent = false;     // the link is lost: drop the job (its leases are the master's again)
  bool fall_back = false;  // connect to the fallback endpoint from now on
  bool give_up = false;    // stop with a failure
  bool reconnect = false;  // open a fresh socket and say hello, now
  double silent_for = 0;   // since the last message from above
  double unheard_for = 0;  // since the last message from above, across reconnects (give_up's measure)
};

class UpstreamLink {
 public:
  UpstreamLink(UpstreamLinkOptions options, double now);

  // A hello went out at `now` on the socket in use (a reconnect that check() asked for, or a
  // rejoin the master asked for).
  void said_hello(double now);
  // The first hello on a fresh socket, outside check()'s reconnects (a relay joins once its site
  // workers are there): silence counts from `now`.
  void joined(double now);
  // A message from above was handled at `now` (counted once handled: storing a large asset
  // takes time that is not silence).
  void heard(double now);
  // Join again at the next check, at once (the master no longer knows us, or its next job).
  void rejoin_now() { m_last_hello = -1; }

  // A ping is due every `interval` (without ping_while_heard, only while nothing was heard for
  // an interval): its sequence number, remembered with its time.
  std::optional<uint64_t> ping_due(double now, double interval);
  // An answer to a ping: the round trip, when it answers our last one.
  std::optional<double> pong(uint64_t sequence, double now) const;

  // Called every turn of the participant's loop. Silent: nothing heard for liveness + 1 intervals
  // plus `patience` (files on their way hold up the master's heartbeats: protocol/fetch_patience.h).
  // Then the job is dropped; behind a relay silent for k_fallback_rounds times that, the
  // fallback is taken (once); with give_up_after, silence that long ends the participant; and a
  // reconnect goes out when the backoff has passed, doubling it. A reconnect also goes out at
  // once after rejoin_now(), silent or not.
  LinkDecision check(double now, double interval, double liveness, double patience);

  double unheard_for(double now) const { return now - m_heard_since; }
  bool give_up_due(double now) const { return m_o.give_up_after > 0 && unheard_for(now) > m_o.give_up_after; }

 private:
  UpstreamLinkOptions m_o;
  double m_last_heard;   // last message, moved on by a reconnect so the next comes a period later
  double m_heard_since;  // last message (or start, or fallback): what give_up_after measures
  double m_last_hello = -1;
  double m_backoff = 1.0;
  double m_last_ping = -1;
  uint64_t m_ping_sequence = 0;
};

}  // namespace farm
