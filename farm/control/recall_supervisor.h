// Seed 002's supervisor between relays, one logic for the master (master/served_job_messages.cpp) and the
// simulator (sim/simulation_sites.cpp): once the pool is empty, a relay with nothing unstarted
// gets unstarted blocks recalled for it from the relay with the most time left
// (Scheduler::plan_recall); its request waits for the answer (Released), which frees them and
// serves it. Pure: decisions only, time as an argument; the caller carries the messages.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "control/job_controller.h"
#include "scheduler/ids.h"

namespace farm {

// A relay's WorkRequest: what its queue wants and how many leases wait unstarted in it.
struct RelayAsk {
  int credits = 0;
  int queued = 0;
};

// A Recall to send: the relay to ask, the leases named, for which dry relay and why.
struct RecallOrder {
  WorkerId from = 0;
  WorkerId dry = 0;
  std::vector<AttemptId> attempts;
  bool site_empty = false;  // the dry relay's site is empty (else: below recall_below)
};

// What a relay's answer (Released) did.
struct RecallAnswer {
  size_t given = 0;      // leases back in the pool
  bool recalled = false;  // it answered a recall (else it gave back on its own: its site cannot render)
  std::optional<std::pair<WorkerId, RelayAsk>> serve;  // the dry relay to serve now, with its request
};

class RecallSupervisor {
 public:
  // enabled = false: never recalls. below: plan_recall's fraction (--recall-below). expiry: a
  // recall unanswered this long is given up (its answer was lost): the relay keeps those leases,
  // and neither it nor the dry relay waits on it any longer.
  RecallSupervisor(bool enabled, double below, double expiry) : m_enabled(enabled), m_below(below), m_expiry(expiry) {}

  // A participant that speaks for a site (idempotent).
  void relay_joined(WorkerId relay) { m_relays[relay]; }
  // A relay's leases went back to the pool (dead or left): recalls from or for it are moot.
  void relay_gone(WorkerId relay);
  // A relay asked for `credits` saying `queued` wait unstarted at it. True when its request
  // waits for a recall's answer instead of being served now; `send` then holds a new Recall to
  // send, unless one for it is already on its way.
  bool holds_request(const Scheduler& scheduler, WorkerId relay, int credits, int queued, double now,
                     std::optional<RecallOrder>& send);
  // The Recall could not be sent: it is forgotten, and the dry relay is served as usual.
  void unsent(const RecallOrder& order);
  // A relay answered with `back` (JobController::recalled takes them back).
  RecallAnswer released(JobController& job, WorkerId from, const std::vector<AttemptId>& back);

  uint64_t recalls() const { return m_recalls; }
  uint64_t recalled_blocks() const { return m_recalled_blocks; }

 private:
  struct RelayState {
    int queued = 0;   // what it last said waits unstarted
    int wanting = 0;  // a request the pool could not serve
  };
  void expire(double now);
  void forget_recall_from(WorkerId relay);

  bool m_enabled;
  double m_below;
  double m_expiry;
  std::map<WorkerId, RelayState> m_relays;
  std::map<AttemptId, WorkerId> m_recalling;  // recalled, not answered yet -> from which relay
  std::map<WorkerId, WorkerId> m_recall_for;  // recalled relay -> the dry one it is for
  std::map<WorkerId, double> m_sent_at;       // recalled relay -> when its recall went
  uint64_t m_recalls = 0, m_recalled_blocks = 0;
};

}  // namespace farm
