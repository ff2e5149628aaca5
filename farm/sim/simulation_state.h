// The simulator's state (farm sim, sim/simulator.h), shared by the files that implement it:
// simulator.cpp (the event loop, the network, the master), simulation_worker.cpp (a worker and
// its render threads), simulation_sites.cpp (a site's relay, and the master's side of relays),
// simulation_service.cpp (several jobs: the service's side, instead of the master's).
// Private to farm/sim.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <limits>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "control/job_controller.h"
#include "control/job_dispatch.h"
#include "sim/quota_clock.h"
#include "sim/sim_link.h"
#include "sim/sim_sites.h"
#include "sim/simulator.h"

namespace farm::sim_detail {

inline constexpr double k_never = std::numeric_limits<double>::infinity();
// Wire sizes of the small messages (FlatBuffers + ZeroMQ framing), bytes.
inline constexpr double k_small_message = 64;
inline constexpr double k_result_header = 96;
// A relay reads what arrived within one poll turn before it asks its master once (a site
// worker's result and its next request arrive together); seconds.
inline constexpr double k_relay_poll_turn = 20e-6;

enum class Msg : uint8_t {
  hello, request, result, failed, heartbeat, leave, assign, cancel, recall, released,
  welcome, job_done  // the service's: serve this job (load its scene), or this job is over for you
};

struct Message {
  Msg kind = Msg::hello;
  // To or from the master: the peer (a flat worker's index, or workers + a site's index for its
  // relay). To or from a relay: the site worker's index.
  uint32_t worker = 0;
  uint32_t site = 0;  // to a relay from its master: which
  uint32_t job = 0;   // which job (index into the simulation's jobs) an assign, result, cancel,
                      // welcome or job_done is about; a render_done's task's job
  AttemptId attempt = 0;
  uint32_t credits = 0;
  uint32_t unstarted = 0;  // a relay's request: leases queued unstarted at it
  int threads = 0, members = 0;  // a relay's hello
  std::vector<AttemptId> attempts;  // a recall, and what was released
  Block block;
  double render = 0, queued = 0;
  uint64_t bytes = 0;
};

inline Message message(Msg kind) {
  Message m;
  m.kind = kind;
  return m;
}

enum class Ev : uint8_t {
  worker_ready, master_arrive, master_process, worker_arrive, render_done, heartbeat, fail, leave, tick,
  relay_ready, relay_arrive, relay_receive, relay_heartbeat, relay_ask,
  loaded,     // a worker has loaded the scene of the job it was welcomed to (m.attempt: which load)
  rerequest,  // (several jobs) a worker's interval since it last asked is over (m.attempt: which ask)
  job_change  // a job is submitted, paused, resumed or reprioritised (m.job; m.kind says which)
};

struct Event {
  double t = 0;
  uint64_t seq = 0;
  Ev kind = Ev::tick;
  Message m;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Task {
  AttemptId attempt = 0;
  uint32_t job = 0;  // attempt ids are per job: a task is (job, attempt)
  Block block;
  double arrived = 0, started = 0;
  bool cancelled = false;
  int thread = 0;  // which render thread runs it
};

// Wall seconds a worker spends per block besides rendering. The farm's own work is CPU work on
// the worker: a slower worker (a smaller CPU quota) spends proportionally longer on it, unless
// its overhead was measured.
inline double block_overhead(const SimWorkerSpec& s, const SimOptions& o) {
  return s.block_overhead >= 0 ? s.block_overhead : o.per_block_overhead / s.speed;
}

struct SimWorker {
  SimWorkerSpec spec;
  SimLink up, down;  // to the master, or to its site's relay (the LAN)
  bool started = false, gone = false;
  // Rendering a job's blocks: from its start (one job), or from its scene's load after a welcome
  // (several jobs). `job` is the one it was welcomed to; `load` counts its loads.
  bool working = false;
  uint32_t job = 0;
  uint64_t load = 0;
  int assigned = 0;
  int busy = 0;
  std::deque<Task> queue;
  std::vector<Task> running;
  // Under a CPU quota, each render thread's share of it (an approximation: the kernel meters the
  // group as a whole), and which threads are rendering.
  std::vector<QuotaClock> quota;
  std::vector<bool> thread_busy;
  double last_request = -k_never;
  uint64_t requests = 0;  // how many it sent (a re-request is due only after the last of them)
  // The master's view of this peer (with several jobs, the service's).
  bool joined = false;
  int serving = -1;        // several jobs: the job the service has it in, -1 none
  double last_heard = 0;
  int capacity() const { return spec.threads + std::max(0, spec.prefetch); }
};

// A job of the simulation: the real controller that a master (or the service's ServedJob) drives
// for it, what its blocks cost, and what the run measured of it. One job is `farm master`'s case.
struct SimJobState {
  SimJobState(const SimJob& s, std::ostream* trace) : spec(s), controller(s.scheduler, trace) {}
  SimJob spec;
  JobController controller;
  bool submitted = false, started = false, paused = false, done = false;
  bool ready = false;   // set up: workers may join it (started: its setup has begun)
  std::set<uint32_t> turned_away;  // workers sent to it while it was set up (served again once it is)
  int changes_due = 0;  // its submission, pause, resume or new priority still to come
  double first_assignment = k_never;
  double last_accept = 0;
  double longest = 0;        // the costliest accepted block, seconds at speed 1
  double worker_seconds = 0;  // the dispatch's count, taken when the job ends
  std::set<uint32_t> members;  // workers in it now (the service's view)
  std::vector<double> first_joined;  // per worker: when it first joined this job (k_never: never)
};

// A site's relay: its bookkeeping (sim_sites.h), its WAN link, and the master's view of it.
struct SimSite {
  SimRelay relay;
  SimLink up, down;
  std::vector<uint32_t> workers;  // indices of its workers
  int threads = 0, members = 0;   // as last announced to the master
  bool joined = false;
  bool ask_due = false;           // it asks at the end of this poll turn
  std::vector<Message> results_up;  // its site's results of this poll turn, forwarded with the ask
};

class Simulation {
 public:
  // One job, as `farm master` runs it.
  Simulation(const CostMap& costs, const std::vector<SimWorkerSpec>& specs, const std::vector<SimSiteSpec>& sites,
             const SimOptions& o);
  // Several jobs, as `farm serve` runs them (simulation_service.cpp).
  Simulation(const std::vector<SimJob>& jobs, const std::vector<SimWorkerSpec>& specs, const SimOptions& o);
  SimResult run();

 private:
  void add_workers(const std::vector<SimWorkerSpec>& specs);
  // The one job of a master's run (every master-side path but the service's).
  JobController& job() { return m_jobs.front()->controller; }
  const JobController& job() const { return m_jobs.front()->controller; }
  bool all_done() const;
  void push(double t, Ev kind, uint32_t worker);
  void push(Event e);
  void dispatch(const Event& e);

  // ------------------------------------------------------------------ network (simulator.cpp)
  // From a worker to its master, or to its site's relay.
  void send_up(SimWorker& w, uint32_t index, Message m, double bytes = k_small_message);
  // From the master to a peer: a flat worker, or a relay.
  void send_down(uint32_t peer, Message m, double bytes = k_small_message);
  bool is_relay(uint32_t peer) const { return peer >= m_workers.size(); }

  // ------------------------------------------------------------------ worker side (simulation_worker.cpp)
  void worker_ready(SimWorker& w, uint32_t index);
  void request_work(SimWorker& w, uint32_t index);
  void asked(SimWorker& w, uint32_t index);  // it sent a request (or one rode on a result)
  void heartbeat(SimWorker& w, uint32_t index);
  void worker_receive(SimWorker& w, const Message& m);
  double render_time(const SimWorker& w, const Task& t) const;
  // Several jobs: the service welcomed it to `job` (it drops what it held and loads that scene),
  // or told it its job is over.
  void worker_welcome(SimWorker& w, const Message& m);
  void worker_reset(SimWorker& w);
  void worker_loaded(SimWorker& w, const Message& m);
  void start_tasks(SimWorker& w, uint32_t index);
  void render_done(SimWorker& w, const Message& m);

  // ------------------------------------------------------------------ relay side (simulation_sites.cpp)
  uint32_t relay_peer(uint32_t site) const { return static_cast<uint32_t>(m_workers.size()) + site; }
  static WorkerId local_id(uint32_t worker) { return worker + 1; }

  void relay_send_up(uint32_t site, Message m, double bytes = k_small_message);

  // To a site worker over its LAN link.
  void relay_send_down(uint32_t worker, Message m);

  // Assigns under the relay's local ids.
  void relay_deliver(const std::vector<SiteAssignment>& assigned);

  // The real relay's ask rule: after whatever changed its want or freed room under the master's
  // cap (a worker's request, result or departure, a cancel) and once per heartbeat interval, at
  // most once per poll turn.
  void relay_ask(uint32_t site);
  void relay_ask_now(uint32_t site);

  // A relay's hello: first for the site as configured, then again when it grew or shrank.
  void relay_announce(uint32_t site, int threads, int members);
  void relay_ready(uint32_t site);
  void relay_worker_gone(uint32_t site, uint32_t worker);

  // A site worker's message, over its LAN link.
  void relay_arrive(const Message& m);

  // The master's message to a relay, over the WAN.
  void relay_receive(const Message& m);
  void relay_heartbeat(uint32_t site);

  // ------------------------------------------------------------------ master side (simulator.cpp; relays: simulation_sites.cpp)
  void master_arrive(const Message& m);
  void master_process();
  void handle(const Message& m);
  void serve(uint32_t peer, int credits, uint32_t job = 0);

  // ------------------------------------------------------------------ the service (simulation_service.cpp)
  static JobKey key_of(uint32_t job) { return job + 1; }
  // A worker's message, as ServiceHost::on_message and on_hello take it.
  void handle_service(const Message& m);
  // ServiceHost::serve_request: the dispatch decides; its job serves the request, or it moves.
  void serve_request(uint32_t peer, int credits, bool request);
  void refresh_work();
  void move(uint32_t peer, uint32_t to);
  // The job is over: its members told (JobDone) and released, the dispatch forgets it.
  void finish_job(uint32_t job);
  // Its members told and released (a pause): their leases go back to its pool.
  void release_all(uint32_t job);
  void drop_worker(uint32_t peer);
  // ServiceHost::turn's pass over workers in no job: one may be wanted now, or it went silent.
  void place_unplaced();
  void job_change(const Message& m);
  // Each started job's scheduler ticked when due (ServiceHost::turn); the dead dropped.
  void service_tick();
  SimResult service_result(SimResult& r);
  std::string service_stats(const SimResult& r) const;
  // The master's side of a relay: a participant as a worker is, plus the supervisor.
  void handle_relay(const Message& m);

  // ServedJob::on_request for a relay: a recall first once the pool is empty, else blocks.
  void relay_request(uint32_t peer, RelayAsk ask);
  void on_result(WorkerId id, const Message& m, uint32_t job = 0);
  // A flat worker's renderer failed the block: the shared controller counts it (as the master).
  void on_block_failed(WorkerId id, const Message& m);
  // Why the master would end the job now without its image ("" to go on).
  std::string abort_reason() const;
  void tick_if_due();
  void schedule_tick();

  // For the bound: a site worker's way to the master is its LAN and its site's WAN.
  std::vector<SimWorkerSpec> specs() const;
  std::vector<std::string> summary(const SimResult& r) const;
  SimOptions m_o;
  std::vector<std::unique_ptr<SimJobState>> m_jobs;  // one: a master's run; several: the service's
  SimJob m_single;       // the one job's description (a master's run)
  bool m_service = false;  // several jobs, as `farm serve` hosts them
  JobDispatch m_dispatch;  // the service's (control/job_dispatch.h)
  std::set<uint32_t> m_unplaced;  // joined workers in no job (the service's view)
  std::mt19937_64 m_rng;
  std::mt19937_64 m_failure_rng;  // renderer failures: their own stream, so that none moves other draws
  RecallSupervisor m_supervisor;  // the master's own (control/recall_supervisor.h)
  std::vector<SimWorker> m_workers;
  std::vector<SimSite> m_sites;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> m_events;
  std::deque<Message> m_inbox;
  bool m_master_scheduled = false;
  double m_master_busy_until = 0;
  double m_tick_at = k_never;
  double m_now = 0;
  uint64_t m_seq = 0, m_count = 0, m_dead = 0, m_messages_in = 0, m_messages_out = 0;
  uint64_t m_failed_blocks = 0;     // BlockFailed reports the master counted
  std::set<WorkerId> m_sitting_out; // benched for failing blocks in a row: not served
  std::string m_block_failure;      // a block that failed k_max_block_failures times ended the job
};

}  // namespace farm::sim_detail
