// farm sim (sim/simulator.h): the event loop, the network and the master of a simulated run;
// a worker is in simulation_worker.cpp, sites and relays in simulation_sites.cpp, the state all
// three share in simulation_state.h.
#include "sim/simulator.h"

#include <chrono>
#include <stdexcept>

#include "base/json_text.h"
#include "sim/simulation_state.h"

namespace farm {

namespace sim_detail {

namespace {

// A JSON number, or null for a bound no cluster can meet (infinite).
std::string number(double v) { return std::isfinite(v) ? fixed(v) : "null"; }

}  // namespace

Simulation::Simulation(const CostMap& costs, const std::vector<SimWorkerSpec>& specs,
                       const std::vector<SimSiteSpec>& sites, const SimOptions& o)
    : m_o(o),
      m_rng(o.seed),
      m_failure_rng(o.seed ^ 0xfa11'fa11'fa11'fa11ULL),
      m_supervisor(o.recall, o.recall_below, o.scheduler.heartbeat_interval * o.scheduler.liveness) {
  m_single.name = o.scene_label;
  m_single.costs = &costs;
  m_single.scheduler = o.scheduler;
  m_jobs.push_back(std::make_unique<SimJobState>(m_single, o.trace));
  m_jobs.front()->submitted = m_jobs.front()->started = m_jobs.front()->ready = true;
  for (const SimSiteSpec& site : sites) {
    const SimLink wan{site.latency, 0, site.bandwidth};
    m_sites.push_back(SimSite{SimRelay(site), wan, wan, {}, 0, 0, false, false, {}});
  }
  add_workers(specs);
}

void Simulation::add_workers(const std::vector<SimWorkerSpec>& specs) {
  m_workers.reserve(specs.size());
  for (const SimWorkerSpec& s : specs) {
    if (s.site >= static_cast<int>(m_sites.size()))
      throw std::invalid_argument("simulate: worker '" + s.name + "' is placed at a site that does not exist");
    if (s.site >= 0) {
      SimSite& site = m_sites[static_cast<size_t>(s.site)];
      site.workers.push_back(static_cast<uint32_t>(m_workers.size()));
      site.threads += s.threads;
      ++site.members;
    }
    SimWorker w;
    w.spec = s;
    w.up = SimLink{s.latency, s.jitter, s.bandwidth};
    w.down = SimLink{s.latency, s.jitter, s.bandwidth};
    w.thread_busy.assign(static_cast<size_t>(std::max(1, s.threads)), false);
    if (s.cpu_quota > 0)
      w.quota.assign(w.thread_busy.size(), QuotaClock(s.quota_period, s.cpu_quota / s.threads * s.quota_period));
    m_workers.push_back(std::move(w));
  }
}

// Nothing left to simulate: every job done, or (several jobs) paused for good.
bool Simulation::all_done() const {
  for (const auto& j : m_jobs) {
    if (!m_service && !j->controller.scheduler().done()) return false;
    if (m_service && !j->done && !(j->paused && j->changes_due == 0)) return false;
  }
  return true;
}

SimResult Simulation::run() {
  auto wall0 = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < m_workers.size(); ++i) {
    const SimWorkerSpec& s = m_workers[i].spec;
    // Under the service a worker joins, then loads each job's scene as it is welcomed to it.
    push(m_service ? s.join : s.join + s.startup, Ev::worker_ready, i);
    if (s.fail >= 0) push(s.fail, Ev::fail, i);
    if (s.leave >= 0) push(s.leave, Ev::leave, i);
  }
  // A relay joins when the first of its workers does, for the site as configured (as with
  // `farm relay --threads`); a site without workers has no relay.
  for (uint32_t s = 0; s < m_sites.size(); ++s) {
    double start = k_never;
    for (uint32_t w : m_sites[s].workers) start = std::min(start, m_workers[w].spec.join);
    if (start < k_never) push(start, Ev::relay_ready, s);
  }
  for (uint32_t j = 0; j < m_jobs.size() && m_service; ++j) {
    const SimJob& spec = m_jobs[j]->spec;
    m_jobs[j]->changes_due = 1 + (spec.pause >= 0) + (spec.resume >= 0) + (spec.reprioritise >= 0);
    Event e;
    e.kind = Ev::job_change;
    e.m.job = j;
    e.t = spec.submit;
    e.m.kind = Msg::hello;  // submitted
    push(e);
    if (spec.pause >= 0) {
      e.t = spec.pause;
      e.m.kind = Msg::leave;  // paused
      push(e);
    }
    if (spec.resume >= 0) {
      e.t = spec.resume;
      e.m.kind = Msg::request;  // resumed
      push(e);
    }
    if (spec.reprioritise >= 0) {
      e.t = spec.reprioritise;
      e.m.kind = Msg::heartbeat;  // its priority changes
      push(e);
    }
  }
  // Whether the job must end is looked at as the master's loop does, at most every poll slice.
  double next_abort_check = 0;
  while (!m_events.empty() && !all_done() && m_block_failure.empty()) {
    if (m_now >= next_abort_check && !m_sitting_out.empty()) {
      if (!abort_reason().empty()) break;
      next_abort_check = m_now + 0.1;
    }
    Event e = m_events.top();
    m_events.pop();
    if (e.t > m_o.time_limit) break;
    m_now = e.t;
    ++m_count;
    dispatch(e);
  }
  SimResult r;
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  r.events = m_count;
  r.messages_in = m_messages_in;
  r.messages_out = m_messages_out;
  r.dead_workers = m_dead;
  if (m_service) return service_result(r);
  const SimJobState& only = *m_jobs.front();
  const CostMap& costs = *only.spec.costs;
  r.completed = job().scheduler().done();
  r.failed_blocks = m_failed_blocks;
  r.benched_workers = m_sitting_out.size();
  r.failure = abort_reason();
  r.makespan = r.completed ? only.last_accept : m_now;
  r.first_assignment = only.first_assignment < k_never ? only.first_assignment : 0;
  r.blocks = job().scheduler().completed_blocks();
  r.reassignments = job().scheduler().reassignments();
  r.late_results = job().scheduler().late_results();
  for (const PolicyDecision& d : job().scheduler().decisions()) r.halvings += d.to_size < d.from_size;
  r.longest_block_cost = only.longest;
  r.recalls = m_supervisor.recalls();
  r.recalled_blocks = m_supervisor.recalled_blocks();
  r.bound = simulated_bound(costs, specs(), m_o, &r.work);
  r.stats_json = job().stats().json(job().scheduler(), r.makespan, summary(r));
  return r;
}

void Simulation::push(double t, Ev kind, uint32_t worker) {
  Event e;
  e.t = t;
  e.kind = kind;
  e.m.worker = worker;
  push(std::move(e));
}

void Simulation::push(Event e) {
  e.seq = m_seq++;
  m_events.push(std::move(e));
}

void Simulation::dispatch(const Event& e) {
  switch (e.kind) {
    case Ev::master_arrive: return master_arrive(e.m);
    case Ev::master_process: return master_process();
    case Ev::relay_ready: return relay_ready(e.m.worker);
    case Ev::relay_arrive: return relay_arrive(e.m);
    case Ev::relay_receive: return relay_receive(e.m);
    case Ev::relay_heartbeat: return relay_heartbeat(e.m.worker);
    case Ev::relay_ask: return relay_ask_now(e.m.worker);
    case Ev::job_change: return job_change(e.m);
    default: break;
  }
  SimWorker& w = m_workers[e.m.worker];
  switch (e.kind) {
    case Ev::worker_ready: return worker_ready(w, e.m.worker);
    case Ev::worker_arrive: return w.gone ? void() : worker_receive(w, e.m);
    case Ev::render_done: return w.gone ? void() : render_done(w, e.m);
    case Ev::loaded: return w.gone ? void() : worker_loaded(w, e.m);
    case Ev::rerequest: return w.gone || e.m.attempt != w.requests ? void() : request_work(w, e.m.worker);
    case Ev::heartbeat: return w.gone ? void() : heartbeat(w, e.m.worker);
    case Ev::fail: w.gone = true; return;
    case Ev::leave:
      if (!w.gone && w.started) send_up(w, e.m.worker, message(Msg::leave));
      w.gone = true;
      return;
    case Ev::tick:
      if (e.t == m_tick_at) {
        m_tick_at = k_never;
        tick_if_due();
        schedule_tick();
      }
      return;
    default: return;
  }
}

// From a worker to its master, or to its site's relay.
void Simulation::send_up(SimWorker& w, uint32_t index, Message m, double bytes) {
  m.worker = index;
  Event e;
  e.t = w.up.deliver(m_now, bytes, m_rng);
  e.kind = w.spec.site >= 0 ? Ev::relay_arrive : Ev::master_arrive;
  e.m = std::move(m);
  push(std::move(e));
}

// From the master to a peer: a flat worker, or a relay.
void Simulation::send_down(uint32_t peer, Message m, double bytes) {
  if (!m_service) job().bytes_out(peer + 1, static_cast<uint64_t>(bytes));
  else if (m_workers[peer].serving >= 0)
    m_jobs[static_cast<size_t>(m_workers[peer].serving)]->controller.bytes_out(peer + 1, static_cast<uint64_t>(bytes));
  ++m_messages_out;
  Event e;
  if (is_relay(peer)) {
    m.site = peer - static_cast<uint32_t>(m_workers.size());
    e.t = m_sites[m.site].down.deliver(m_now, bytes, m_rng);
    e.kind = Ev::relay_receive;
  } else {
    m.worker = peer;
    e.t = m_workers[peer].down.deliver(m_now, bytes, m_rng);
    e.kind = Ev::worker_arrive;
  }
  e.m = std::move(m);
  push(std::move(e));
}

void Simulation::master_arrive(const Message& m) {
  m_inbox.push_back(m);
  if (!m_master_scheduled) {
    m_master_scheduled = true;
    push(std::max(m_now, m_master_busy_until), Ev::master_process, 0);
  }
}

void Simulation::master_process() {
  Message m = m_inbox.front();
  m_inbox.pop_front();
  ++m_messages_in;
  if (is_relay(m.worker)) {
    handle_relay(m);
  } else if (m_service) {
    handle_service(m);
  } else {
    handle(m);
  }
  m_master_busy_until = m_now + m_o.master_message_cost;
  tick_if_due();
  if (!m_inbox.empty()) {
    push(m_master_busy_until, Ev::master_process, 0);
  } else {
    m_master_scheduled = false;
  }
  schedule_tick();
}

void Simulation::handle(const Message& m) {
  SimWorker& w = m_workers[m.worker];
  const WorkerId id = m.worker + 1;
  if (m.kind == Msg::hello) {
    if (w.joined) return;
    w.joined = true;
    job().join(id, w.spec.name, w.spec.threads, m_now);
    return;
  }
  if (!w.joined) return;  // declared dead or left: the real master answers "not joined"
  job().heard(id, m_now);
  switch (m.kind) {
    case Msg::request: serve(m.worker, static_cast<int>(m.credits)); break;
    case Msg::result:
      on_result(id, m);
      if (m.credits > 0) serve(m.worker, static_cast<int>(m.credits));  // its next request, carried along
      break;
    case Msg::failed:
      on_block_failed(id, m);
      if (m.credits > 0) serve(m.worker, static_cast<int>(m.credits));
      break;
    case Msg::heartbeat:
      // The real master measures the round trip with pings; the model knows it.
      job().round_trip(id, w.up.latency + w.down.latency + (w.up.jitter + w.down.jitter) / 2);
      break;
    case Msg::leave:
      job().leave(id, m_now, false);
      w.joined = false;
      break;
    default: break;
  }
}

void Simulation::serve(uint32_t peer, int credits, uint32_t j) {
  if (m_sitting_out.count(peer + 1)) return;  // benched: it stays connected, idle
  SimJobState& served = *m_jobs[j];
  for (const Assignment& a : served.controller.request(peer + 1, m_now, credits)) {
    served.first_assignment = std::min(served.first_assignment, m_now);
    Message out = message(Msg::assign);
    out.job = j;
    out.attempt = a.attempt;
    out.block = a.block;
    send_down(peer, out);
  }
}

void Simulation::on_result(WorkerId id, const Message& m, uint32_t j) {
  SimJobState& of = *m_jobs[j];
  ResultReply reply = of.controller.result(id, m.attempt, m_now, ResultReport{m.render, m.queued, m.bytes, 0});
  if (reply.outcome != ResultOutcome::accepted) return;
  of.last_accept = m_now;
  Block in_map = reply.block;
  const CostMap& costs = *of.spec.costs;
  in_map.frame = std::min(in_map.frame, costs.frames());
  of.longest = std::max(of.longest, costs.cost(in_map));
  for (const Cancel& c : reply.cancels) {
    Message out = message(Msg::cancel);
    out.job = j;
    out.attempt = c.attempt;
    send_down(c.worker - 1, out);
  }
}

void Simulation::on_block_failed(WorkerId id, const Message& m) {
  if (job().check_lease(id, m.attempt, m.block) != LeaseCheck::ok) return;  // settled meanwhile
  ++m_failed_blocks;
  const FailureCount count = job().block_failed(id, m.attempt, m.block, true);
  if (count.block_gives_up && m_block_failure.empty()) {
    const Block& b = m.block;
    m_block_failure = "block " + std::to_string(b.width) + "x" + std::to_string(b.height) + " at " + std::to_string(b.x) +
                      "," + std::to_string(b.y) + " of frame " + std::to_string(b.frame) + " failed " +
                      std::to_string(count.block_failures) + " times";
  }
  if (count.bench) m_sitting_out.insert(id);
}

std::string Simulation::abort_reason() const {
  if (!m_block_failure.empty()) return m_block_failure;
  // As the master: every connected worker sits out, one benched for failing blocks.
  if (m_sitting_out.empty()) return "";
  size_t connected = 0;
  for (const SimWorker& w : m_workers) connected += w.joined ? 1 : 0;
  for (const SimSite& s : m_sites) connected += s.joined ? 1 : 0;
  return connected > 0 && m_sitting_out.size() >= connected
             ? "no worker left to render the job: every connected worker sits it out"
             : "";
}

void Simulation::tick_if_due() {
  if (m_service) return service_tick();
  if (job().scheduler().next_deadline() > m_now) return;
  for (WorkerId dead : job().tick(m_now)) {
    if (is_relay(dead - 1)) {
      m_sites[dead - 1 - m_workers.size()].joined = false;
      m_supervisor.relay_gone(dead);
    } else {
      m_workers[dead - 1].joined = false;
    }
    ++m_dead;
  }
}

void Simulation::schedule_tick() {
  double d = k_never;
  for (const auto& j : m_jobs)
    if (j->ready && !j->done) d = std::min(d, j->controller.scheduler().next_deadline());
  // A deadline that tick() left in the past would re-fire at the same instant forever:
  // virtual time must move on, as real time does for the master.
  if (d <= m_now) d = std::nextafter(m_now, k_never);
  if (d < m_tick_at && d < k_never) {
    m_tick_at = d;
    push(m_tick_at, Ev::tick, 0);
  }
}

// For the bound: a site worker's way to the master is its LAN and its site's WAN.
std::vector<SimWorkerSpec> Simulation::specs() const {
  std::vector<SimWorkerSpec> out;
  out.reserve(m_workers.size());
  for (const SimWorker& w : m_workers) {
    out.push_back(w.spec);
    if (w.spec.site >= 0) out.back().latency += m_sites[static_cast<size_t>(w.spec.site)].up.latency;
  }
  return out;
}

std::vector<std::string> Simulation::summary(const SimResult& r) const {
  return {json_field("simulated", true),
          json_field("scene", m_o.scene_label),
          json_field("width", m_o.scheduler.width),
          json_field("height", m_o.scheduler.height),
          json_field("frames", m_o.scheduler.frames.size()),
          json_field("spp", m_o.spp),
          json_field("bad_messages", 0),
          json_field("seed", m_o.seed),
          json_field("events", r.events),
          json_field("completed", r.completed),
          json_raw_field("work_seconds", number(r.work)),
          json_raw_field("bound_plain_seconds", number(r.bound.plain)),
          json_raw_field("bound_honest_seconds", number(r.bound.honest())),
          json_field("sites", m_sites.size()),
          json_field("messages_in", r.messages_in),
          json_field("messages_out", r.messages_out),
          json_field("recalls", r.recalls),
          json_field("recalled_blocks", r.recalled_blocks),
          json_field("failed_blocks", r.failed_blocks),
          json_field("benched_workers", r.benched_workers),
          json_field("failure", r.failure)};
}

}  // namespace sim_detail

using sim_detail::block_overhead;
using sim_detail::Simulation;


MakespanBound simulated_bound(const CostMap& costs, const std::vector<SimWorkerSpec>& workers, const SimOptions& o,
                              double* work_out) {
  const SchedulerConfig& c = o.scheduler;
  double work = 0;
  for (int frame : c.frames) work += costs.frame_total(std::clamp(frame, 1, costs.frames()));
  // Blocks are never merged: at least one per initial tile, each with the farm's own per-block
  // work, in work units (seconds at speed 1, like the cost map's) at least the least any worker
  // spends on it.
  double block_work = std::numeric_limits<double>::infinity();
  for (const SimWorkerSpec& s : workers)
    if (s.speed > 0) block_work = std::min(block_work, block_overhead(s, o) * s.speed);
  if (!std::isfinite(block_work)) block_work = 0;
  const int block = initial_block_size(c);
  const double columns = std::ceil(static_cast<double>(c.width) / block);
  const double rows = std::ceil(static_cast<double>(c.height) / block);
  work += columns * rows * static_cast<double>(c.frames.size()) * block_work;
  std::vector<BoundWorker> bw;
  bw.reserve(workers.size());
  for (const SimWorkerSpec& s : workers) {
    BoundWorker b;
    b.start = s.join + s.startup + 2 * s.latency;
    // Under a quota the worker's long-run speed is capped (a fresh period's budget may run at the
    // thread speed: one block still counts at it).
    b.speed = s.speed * (s.cpu_quota > 0 ? std::min<double>(s.threads, s.cpu_quota) : s.threads);
    b.thread_speed = s.speed;
    b.result_delay = s.latency;
    if (s.fail >= 0) b.end = s.fail;
    if (s.leave >= 0) b.end = std::min(b.end, s.leave);
    bw.push_back(b);
  }
  if (work_out) *work_out = work;
  return makespan_bound(bw, work, costs.costliest_min_block(block, c.min_block) + block_work);
}

SimResult simulate(const CostMap& costs, const std::vector<SimWorkerSpec>& workers, const SimOptions& options,
                   const std::vector<SimSiteSpec>& sites) {
  Simulation sim(costs, workers, sites, options);
  return sim.run();
}

}  // namespace farm
