// A relay's bookkeeping (docs/relays.md): the blocks its master leased to it, which of its own
// workers holds each, and how many more to ask for. Pure, like the scheduler: no sockets, no
// clock. The relay process (relay/relay.h) and the simulator (sim/sim_sites.h) drive it with the messages of both sides.
//
// Blocks pass through whole: the master's policy sizes them for the relay, which it sees as one
// worker with the site's render threads. A block is queued until one of the site's workers asks,
// then held by that worker under a local attempt id (the master's id never reaches the site, so a
// site worker cannot name another site's lease). A worker that leaves or dies gives its blocks
// back to the front of the queue: the site renders them again, the master never notices.
// Copies inside the site: with the queue empty, a worker with an idle thread gets a copy of the
// block another worker has held longest, once it has held it past a straggler threshold (a hung
// render thread whose heartbeats go on would otherwise hold it for ever: the master never copies
// a block to the participant holding it); the first result wins, the other holder is told to
// cancel. The threshold keeps copies from taking threads while the queue only waits for the
// master's next blocks.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "scheduler/block.h"
#include "scheduler/ids.h"

namespace farm {

// One of the master's leases to this relay.
struct RelayLease {
  AttemptId upstream = 0;  // the master's attempt id
  Block block;
};

// A block handed to one of the site's workers.
struct SiteAssignment {
  WorkerId worker = 0;
  AttemptId local = 0;  // the relay's attempt id, what the worker sees
  RelayLease lease;
  bool copy = false;    // a second holder of a block another worker still renders
};

class RelayQueue {
 public:
  // Upstream. The master leased `block` to this relay as attempt `upstream` (a repeated id is
  // ignored).
  void leased(AttemptId upstream, const Block& block);
  // The master cancelled a lease (another copy won, or the job moved on): it leaves the queue,
  // or the workers holding it are returned, to be told to cancel their local attempts.
  std::vector<SiteAssignment> withdrawn(AttemptId upstream);
  // The master recalls a lease (seed 002's supervisor moves it to another site): true, and it
  // is forgotten, if it was still queued here; false if a site worker holds it (or unknown).
  bool recall(AttemptId upstream);
  // What a recall of `upstream` ids would give back without changing anything: those of them
  // still queued, then, up to as many as asked, other queued leases, newest first (the master
  // names its newest leases, but a block given back by a site worker is queued again in front).
  std::vector<AttemptId> recallable(const std::vector<AttemptId>& upstream) const;
  std::vector<AttemptId> queued_ids() const { return {m_queue.begin(), m_queue.end()}; }
  // Leases to ask the master for so that the site holds what its workers can take plus `spare`
  // unstarted blocks (what covers the round trip to the master); 0 when it holds enough, and
  // with no site worker (nobody would render them).
  int wanted(int spare) const;

  // Downstream. A site worker joined with `threads` render threads, or left (cleanly or declared
  // dead): its blocks go back to the front of the queue, their local ids forgotten.
  void worker_joined(WorkerId worker, int threads);
  // Returns what it held (to be cancelled, if it is still there).
  std::vector<SiteAssignment> worker_left(WorkerId worker);
  // The worker asks for up to `credits` blocks: FIFO from the queue, at most what its threads
  // and one spare each can hold; a spare only while the queue also has a block for every idle
  // thread of the other workers. With the queue empty, its idle threads get copies of blocks held
  // for `copy_after` seconds or more at `now` (above; copy_after < 0: none).
  std::vector<SiteAssignment> request(WorkerId worker, int credits, double now = 0, double copy_after = -1);
  // The Assign for `local` could not be sent to `worker`: the block goes back to the front of
  // the queue, its local id forgotten.
  void undeliverable(WorkerId worker, AttemptId local);
  // The lease `worker` holds as `local`, if it does (nothing once cancelled, or stale).
  std::optional<RelayLease> held_by(WorkerId worker, AttemptId local) const;
  // The worker's result for `local`: the lease to answer upstream, which is then done here, and
  // in `cancels` the other holders of a copy; nothing if `local` is not a block this worker
  // holds (cancelled, or stale).
  std::optional<RelayLease> finished(WorkerId worker, AttemptId local, std::vector<SiteAssignment>* cancels = nullptr);
  // The worker's renderer failed `local`: the lease to report upstream if no other worker holds
  // a copy of it (then it is done here); nothing otherwise (the copy may still succeed).
  std::optional<RelayLease> failed(WorkerId worker, AttemptId local);
  // The master is gone or the job ended: every lease is forgotten; the blocks site workers still
  // hold are returned, to be cancelled. The workers stay.
  std::vector<SiteAssignment> clear_leases();

  size_t queued() const { return m_queue.size(); }
  size_t held() const { return m_held.size(); }
  int site_threads() const;
  // Threads of the site's workers with nothing to render.
  int idle_threads() const { return m_sums.idle_threads; }
  bool has_worker(WorkerId worker) const { return m_workers.count(worker) != 0; }
  std::vector<WorkerId> workers() const;

 private:
  struct SiteWorker {
    int threads = 1;
    std::set<AttemptId> holds;  // local attempt ids
  };
  struct Held {
    WorkerId worker = 0;
    RelayLease lease;
    double since = 0;  // when it was handed out
  };
  std::map<AttemptId, Block> m_leases;     // every lease held, by upstream id (queued or held)
  std::deque<AttemptId> m_queue;           // upstream ids not yet handed out, next first
  std::map<AttemptId, Held> m_held;        // by local id
  std::map<AttemptId, std::vector<AttemptId>> m_locals_of;  // upstream id -> local ids holding it
  // Drops one holder of a lease; true if nobody holds it any more.
  bool drop_holder(AttemptId local);
  std::map<WorkerId, SiteWorker> m_workers;
  // Sums over m_workers, kept as they change (a site of 1,000 asks often): their threads, what
  // they may hold (relay_holdable), their threads with nothing to render.
  struct Sums {
    int threads = 0, capacity = 0, idle_threads = 0;
  } m_sums;
  // Adds (+1) or removes (-1) a worker's share of m_sums: around every change to it.
  void count(const SiteWorker& w, int sign);
  AttemptId m_next_local = 1;
};

// The unstarted blocks a relay keeps beyond what its site's workers hold (RelayQueue::wanted): at
// least `spare`, and enough to cover the round trip to the master: while a request travels, each
// of the site's threads finishes upstream_rtt / block_seconds blocks. A fixed spare of 4 left a
// site of 100 workers 200 ms away half idle once the blocks were short (sim, 10 sites x 100). The
// master's policy caps what it leases anyway. Unknown times (<= 0): `spare`.
int relay_spare(int spare, double upstream_rtt, double block_seconds, int site_threads);

// A relay's running estimate of a time (a site block's render time, the master's round trip)
// after one more sample: 0.8 of the old and 0.2 of the new, or the sample alone for the first
// one (`current` <= 0). A sample that is not a time (negative, not finite, or at least
// k_max_render_seconds: from a hostile or broken worker) leaves the estimate as it was, so it
// cannot switch the site's copies off or ask the master for millions. The real relay and the
// simulator's both use it.
double smoothed_seconds(double current, double sample);

// How long a site worker holds a block before an idle thread of the site may take a copy of it
// (RelayQueue::request): 4 smoothed block times, at least 1 s; unknown times (<= 0): never (-1).
double relay_copy_after(double block_seconds);

// When a relay's idle site threads may take copies: like the master, which copies only once its
// pool is handed out, a relay copies only once the master looks dry for it, i.e. its queue has
// stayed empty for two round trips to the master (an ask on its way would have been answered).
// Mid-job the queue empties for a moment whenever the WAN delivers in bursts; a thread that took
// a copy then kept the fresh blocks that came a round trip later waiting behind it (sim, 10 sites
// x 100 workers at 200 ms: 1.10 of the honest bound without copies, 1.20 with copies at any time).
class RelayCopyGate {
 public:
  // Before each hand-out: how many leases wait in the queue at `now`.
  void note(size_t queued, double now) {
    if (queued > 0)
      m_empty_since = -1;
    else if (m_empty_since < 0)
      m_empty_since = now;
  }
  // The copy_after for RelayQueue::request at `now`: -1 (none) until the queue has been empty for
  // 2 x `upstream_rtt` (a second when not measured yet), then relay_copy_after(block_seconds).
  double copy_after(double now, double upstream_rtt, double block_seconds) const;

 private:
  double m_empty_since = -1;
};

// How many blocks a site worker of `threads` may hold at once: one per thread plus one spare
// each, so its next block is there when one finishes.
int relay_holdable(int threads);

}  // namespace farm
