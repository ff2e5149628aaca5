// A discrete-event simulator of a farm run: virtual time, the real JobController (scheduler,
// statistics, link estimates), modelled workers and links (docs/architecture.md, "One
// controller, two drivers"). It drives the controller exactly as the ZeroMQ master does (the
// same calls per event, tick() whenever a deadline has come), so its --stats JSON feeds the
// same plots as a real run.
//
// Modelled: per-worker render speed against a cost map, threads and prefetch (credits as the
// real worker asks for them, and its re-request every heartbeat interval when a request came
// back empty), one-way latency + jitter + bandwidth per direction (FIFO, serialised), a fixed
// per-block cost on the worker, a single-server master (fixed cost per message), joins, clean
// leaves, silent failures (detected by the scheduler's liveness rule), cancels of queued or
// running copies, renderer failures (a fraction of a worker's blocks reported as BlockFailed,
// counted by the controller's RendererFailures: benching, a block's last try, the job ending
// as the master ends it; flat workers only). Not modelled: the scene transfer (part of each worker's `startup`), TCP
// slow start, CPU contention between processes on one machine.
//
// Sites (cluster file [[site]], sim_sites.h): a site's workers talk over their LAN link to the
// site's relay, which is ONE participant of the master over the site's WAN link (join with the
// site's threads and workers as members, like `farm relay --threads`). Modelled as the real
// relay: its bookkeeping is the real RelayQueue; it asks the master (credits =
// RelayQueue::wanted(spare), queued = RelayQueue::queued()) after a site worker's request,
// result or departure, a cancel, and once per heartbeat interval, never before a site worker
// asked (its scene is loaded), at most once per poll turn (20 us); results are forwarded with their payload over the WAN, with the
// time a block waited at the relay reported as queueing; cancels reach the site worker holding
// the block; the relay's copies inside its site as the real relay gives them (RelayCopyGate: once
// its queue stayed empty for two round trips), first result wins, the other holder cancelled;
// a silent site worker is forgotten after interval x liveness and the relay says
// hello again with the smaller site. The master's supervisor (SimOptions::recall) is the
// master's own RecallSupervisor (control/recall_supervisor.h), unanswered recalls expiring
// included: a Recall over the WAN, Released back, the blocks to the pool, the dry relay served. Not modelled for sites: the relay's own CPU and
// message costs (it is free and instant), the scene's one transfer per site, a relay that
// fails (only through all its workers failing), the per-message costs of the LAN side at the
// master (there are none: the master never sees site workers) and its giving back a site's
// queue when no worker is left.
//
// Several jobs (simulate_jobs, `farm sim --jobs`): the same workers, links and master model, with
// the master's loop replaced by the service's (farm/service/service.cpp) around one JobController
// per job and the service's own JobDispatch, so that the simulator and `farm serve` decide which
// job a worker serves in one place. Not modelled there: the service's preview render and journal,
// its queue database, clients, relays (sites) and renderer failures.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "control/makespan_bound.h"
#include "scheduler/scheduler_types.h"
#include "sim/cluster_spec.h"
#include "costs/cost_map.h"

namespace farm {

struct SimOptions {
  SchedulerConfig scheduler;        // image size, frames, policy, block, wait, copies, liveness
  double bytes_per_pixel = 3;       // result payload per pixel on the wire (8-bit RGB)
  double payload_ratio = 1;         // compressed / raw payload (zstd), 1 = not compressed
  double per_block_overhead = 150e-6;  // worker CPU seconds per block besides rendering, at speed 1
  double master_message_cost = 5e-6;   // master seconds per message handled
  uint64_t seed = 1;
  double time_limit = 1e7;          // virtual seconds before giving up (a stuck cluster)
  std::string scene_label = "simulated";
  int spp = 0;                      // for the stats only
  std::ostream* trace = nullptr;    // every scheduler call (scheduler/scheduler_trace.h)
  // Seed 002's supervisor between relays, as `farm master` (MasterOptions::recall, recall_below).
  bool recall = true;
  double recall_below = 0;
};

// One job of a farm that several jobs share (`farm sim --jobs`), as `farm serve` hosts it: its
// own scheduler and cost map, and when it arrives, with which priority, paused and resumed when.
struct SimJob {
  std::string name;
  const CostMap* costs = nullptr;  // what its blocks cost (not owned; outlives the simulation)
  SchedulerConfig scheduler;       // its image, frames, policy, block, copies (heartbeat and
                                   // liveness are the service's: SimOptions::scheduler's)
  int priority = 0;                // higher first (control/job_dispatch.h)
  double submit = 0;               // seconds of the simulation's clock
  double load = -1;                // seconds a worker takes to load its scene when it moves to it;
                                   // < 0: the worker's own `startup`
  double setup = 0;                // seconds the service takes to set it up (its scene read, a
                                   // factoring policy's preview) once a worker is first due to
                                   // move to it; no worker is moved to it meanwhile
  double pause = -1, resume = -1;  // paused at, resumed at (-1: never)
  double reprioritise = -1;        // at this time its priority becomes `new_priority` (-1: never)
  int new_priority = 0;
};

// What one job of a shared farm got.
struct SimJobResult {
  std::string name;
  int priority = 0;        // as submitted
  bool completed = false;
  bool paused = false;     // paused at the end (never resumed)
  double submit = 0;
  double start = -1;       // its first block handed out (-1: none)
  double finish = -1;      // its last accepted result (-1: not completed)
  double first_worker = -1;  // when its first worker joined it (-1: none did)
  double every_worker = -1;  // when the last worker that ever served it first joined it (-1: none did)
  int workers = 0;           // how many distinct workers served it
  double worker_seconds = 0;  // worker-thread-seconds it held workers (the dispatch's count, loads included)
  uint64_t blocks = 0, reassignments = 0;
  std::string stats_json;  // its controller's statistics (the format of `farm master --stats`)
  double makespan() const { return finish >= 0 ? finish - submit : -1; }
};

struct SimResult {
  bool completed = false;
  double makespan = 0;         // master clock at the last accepted result
  double first_assignment = 0;
  uint64_t events = 0;
  double wall_seconds = 0;     // real time the simulation took
  uint64_t blocks = 0, reassignments = 0, late_results = 0, halvings = 0, dead_workers = 0;
  uint64_t messages_in = 0, messages_out = 0;  // handled and sent by the master
  uint64_t recalls = 0, recalled_blocks = 0;   // the supervisor's (sites only)
  uint64_t failed_blocks = 0;    // renderer failures the master counted (SimWorkerSpec::render_failures)
  uint64_t benched_workers = 0;  // workers sitting the job out for failing blocks in a row
  std::string failure;           // why the job ended without its image, as the master says it; "" if it did not
  double longest_block_cost = 0;  // the costliest accepted block, seconds at speed 1
  double work = 0;             // W: every frame's cost plus the farm's cost of the fewest blocks
  MakespanBound bound;         // on the makespan (control/makespan_bound.h)
  std::string stats_json;      // the same format as `farm master --stats`; with jobs, theirs in "jobs"
  std::vector<SimJobResult> jobs;  // simulate_jobs only, in the order given
  double window() const { return makespan - first_assignment; }
};

// The bound of a simulated run: worker i can render from join + startup + the request's and the
// assignment's one-way trips, until it fails or leaves; its last result takes one more trip.
MakespanBound simulated_bound(const CostMap& costs, const std::vector<SimWorkerSpec>& workers, const SimOptions& options,
                              double* work = nullptr);

// `sites`: the relays that workers with SimWorkerSpec::site >= 0 sit behind (expand_sites).
SimResult simulate(const CostMap& costs, const std::vector<SimWorkerSpec>& workers, const SimOptions& options,
                   const std::vector<SimSiteSpec>& sites = {});

// Several jobs sharing the workers as `farm serve` shares them: at each worker request the
// service's own JobDispatch (control/job_dispatch.h) decides which job it serves, with the calls
// and at the moments the service makes them (add_job at submission, set_work before deciding,
// assign at a move, remove_job at the end); a worker that moves is welcomed and loads the new
// job's scene (SimJob::load, else its `startup`) before asking for blocks. A worker's `startup`
// is not paid at its join here: it joins the service at `join` and loads a scene per welcome.
// Sites and renderer failures are not modelled with jobs (refused). The result's makespan is
// the last job's last accepted result; the bound is not computed (0).
SimResult simulate_jobs(const std::vector<SimJob>& jobs, const std::vector<SimWorkerSpec>& workers,
                        const SimOptions& options);

}  // namespace farm
