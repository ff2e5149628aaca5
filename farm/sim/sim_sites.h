// The sites model of `farm sim` (docs/relays.md, "Simulated: many sites"): a relay per site, on
// the real relay's bookkeeping (RelayQueue); the master's supervisor between relays is the
// master's own (control/recall_supervisor.h). Both are decisions only: the simulator
// (simulation_sites.cpp) carries their messages over its links.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "control/job_controller.h"
#include "control/recall_supervisor.h"
#include "control/relay_queue.h"
#include "sim/cluster_spec.h"

namespace farm {

// A block a site worker finished, as the relay forwards it: the master's lease, and the seconds
// it waited at the relay (reported as queueing, as the real relay does).
struct ForwardedResult {
  RelayLease lease;
  double waited = 0;
  std::vector<SiteAssignment> cancels;  // other holders of the block inside the site: the first result won
};

// One site's relay. Site workers are named by ids of the simulator's choosing.
class SimRelay {
 public:
  explicit SimRelay(SimSiteSpec spec) : m_spec(std::move(spec)) {}
  const SimSiteSpec& spec() const { return m_spec; }

  // Downstream. Joined (hello), any message, a request (remembered, served from the queue).
  void worker_joined(WorkerId worker, int threads, double now);
  void heard(WorkerId worker, double now) { m_last_heard[worker] = now; }
  std::vector<SiteAssignment> worker_request(WorkerId worker, int credits, double now);
  // What the worker asked for and has not been given yet, from the queue (after its result, as
  // the real relay serves it).
  std::vector<SiteAssignment> serve_waiting(WorkerId worker, double now) { return serve(worker, now); }
  // A result for the worker's local attempt, rendered in `render_seconds`: what goes upstream
  // and the site's copies of it to cancel (nothing once cancelled or stale).
  std::optional<ForwardedResult> worker_finished(WorkerId worker, AttemptId local, double render_seconds);
  // Left cleanly, or silent for longer than `limit` (silent_workers): its blocks go to the others.
  std::vector<SiteAssignment> worker_left(WorkerId worker, double now);
  std::vector<WorkerId> silent_workers(double now, double limit) const;

  // Upstream. An Assign (served at once to workers waiting), a Cancel (the site worker holding
  // it, to be told), a Recall (what was still queued goes back).
  std::vector<SiteAssignment> leased(AttemptId upstream, const Block& block, double now);
  std::vector<SiteAssignment> withdrawn(AttemptId upstream);
  std::vector<AttemptId> recall(const std::vector<AttemptId>& attempts);
  // The request the real relay would send now: only once a site worker asked (its scene is
  // loaded), and only when its queue wants more than it holds (its spare covering the WAN's round
  // trip, which the real relay measures with its pings, at the site's pace).
  std::optional<RelayAsk> ask() const;

  int threads() const { return m_queue.site_threads(); }
  int members() const { return static_cast<int>(m_queue.workers().size()); }

 private:
  std::vector<SiteAssignment> serve(WorkerId worker, double now);
  std::vector<SiteAssignment> serve_all(double now);

  SimSiteSpec m_spec;
  RelayQueue m_queue;
  bool m_site_loaded = false;
  std::map<WorkerId, int> m_wanting;        // credits a worker asked for and has not been given
  std::map<WorkerId, double> m_last_heard;
  std::map<AttemptId, double> m_leased_at;  // upstream id -> when it (last) entered the queue
  std::map<AttemptId, double> m_waited;     // upstream id -> seconds queued here so far
  double m_block_seconds = 0;               // smoothed render seconds of the site's results
  RelayCopyGate m_copy_gate;                // copies inside the site once the master looks dry
};

}  // namespace farm
