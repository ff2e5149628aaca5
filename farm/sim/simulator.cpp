#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>

#include "base/json_text.h"
#include "control/job_controller.h"
#include "sim/quota_clock.h"
#include "sim/sim_link.h"
#include "sim/sim_sites.h"

namespace farm {

namespace {

constexpr double k_never = std::numeric_limits<double>::infinity();
// Wire sizes of the small messages (FlatBuffers + ZeroMQ framing), bytes.
constexpr double k_small_message = 64;
constexpr double k_result_header = 96;
// A relay reads what arrived within one poll turn before it asks its master once (a site
// worker's result and its next request arrive together); seconds.
constexpr double k_relay_poll_turn = 20e-6;

enum class Msg : uint8_t { hello, request, result, heartbeat, leave, assign, cancel, recall, released };

struct Message {
  Msg kind = Msg::hello;
  // To or from the master: the peer (a flat worker's index, or workers + a site's index for its
  // relay). To or from a relay: the site worker's index.
  uint32_t worker = 0;
  uint32_t site = 0;  // to a relay from its master: which
  AttemptId attempt = 0;
  uint32_t credits = 0;
  uint32_t unstarted = 0;  // a relay's request: leases queued unstarted at it
  int threads = 0, members = 0;  // a relay's hello
  std::vector<AttemptId> attempts;  // a recall, and what was released
  Block block;
  double render = 0, queued = 0;
  uint64_t bytes = 0;
};

// A JSON number, or null for a bound no cluster can meet (infinite).
std::string number(double v) { return std::isfinite(v) ? fixed(v) : "null"; }

Message message(Msg kind) {
  Message m;
  m.kind = kind;
  return m;
}

enum class Ev : uint8_t {
  worker_ready, master_arrive, master_process, worker_arrive, render_done, heartbeat, fail, leave, tick,
  relay_ready, relay_arrive, relay_receive, relay_heartbeat, relay_ask
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
  Block block;
  double arrived = 0, started = 0;
  bool cancelled = false;
  int thread = 0;  // which render thread runs it
};

// Wall seconds a worker spends per block besides rendering. The farm's own work is CPU work on
// the worker: a slower worker (a smaller CPU quota) spends proportionally longer on it, unless
// its overhead was measured.
double block_overhead(const SimWorkerSpec& s, const SimOptions& o) {
  return s.block_overhead >= 0 ? s.block_overhead : o.per_block_overhead / s.speed;
}

struct SimWorker {
  SimWorkerSpec spec;
  SimLink up, down;  // to the master, or to its site's relay (the LAN)
  bool started = false, gone = false;
  int assigned = 0;
  int busy = 0;
  std::deque<Task> queue;
  std::vector<Task> running;
  // Under a CPU quota, each render thread's share of it (an approximation: the kernel meters the
  // group as a whole), and which threads are rendering.
  std::vector<QuotaClock> quota;
  std::vector<bool> thread_busy;
  double last_request = -k_never;
  // The master's view of this peer.
  bool joined = false;
  int capacity() const { return spec.threads + std::max(0, spec.prefetch); }
};

// A site's relay: its bookkeeping (sim_sites.h), its WAN link, and the master's view of it.
struct SimSite {
  SimRelay relay;
  SimLink up, down;
  std::vector<uint32_t> workers;  // indices of its workers
  int threads = 0, members = 0;   // as last announced to the master
  bool joined = false;
  bool ask_due = false;           // it asks at the end of this poll turn
};

class Simulation {
 public:
  Simulation(const CostMap& costs, const std::vector<SimWorkerSpec>& specs, const std::vector<SimSiteSpec>& sites,
             const SimOptions& o)
      : m_costs(costs), m_o(o), m_job(o.scheduler, o.trace), m_rng(o.seed), m_supervisor(o.recall, o.recall_below) {
    for (const SimSiteSpec& site : sites) {
      const SimLink wan{site.latency, 0, site.bandwidth};
      m_sites.push_back(SimSite{SimRelay(site), wan, wan, {}, 0, 0, false, false});
    }
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

  SimResult run() {
    auto wall0 = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < m_workers.size(); ++i) {
      const SimWorkerSpec& s = m_workers[i].spec;
      push(s.join + s.startup, Ev::worker_ready, i);
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
    while (!m_events.empty() && !m_job.scheduler().done()) {
      Event e = m_events.top();
      m_events.pop();
      if (e.t > m_o.time_limit) break;
      m_now = e.t;
      ++m_count;
      dispatch(e);
    }
    SimResult r;
    r.completed = m_job.scheduler().done();
    r.makespan = r.completed ? m_last_accept : m_now;
    r.first_assignment = m_first_assignment < k_never ? m_first_assignment : 0;
    r.events = m_count;
    r.blocks = m_job.scheduler().completed_blocks();
    r.reassignments = m_job.scheduler().reassignments();
    r.late_results = m_job.scheduler().late_results();
    for (const PolicyDecision& d : m_job.scheduler().decisions()) r.halvings += d.to_size < d.from_size;
    r.dead_workers = m_dead;
    r.longest_block_cost = m_longest;
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    r.recalls = m_supervisor.recalls();
    r.recalled_blocks = m_supervisor.recalled_blocks();
    r.messages_in = m_messages_in;
    r.messages_out = m_messages_out;
    r.bound = simulated_bound(m_costs, specs(), m_o, &r.work);
    r.stats_json = m_job.stats().json(m_job.scheduler(), r.makespan, summary(r));
    return r;
  }

 private:
  void push(double t, Ev kind, uint32_t worker) {
    Event e;
    e.t = t;
    e.kind = kind;
    e.m.worker = worker;
    push(std::move(e));
  }
  void push(Event e) {
    e.seq = m_seq++;
    m_events.push(std::move(e));
  }

  void dispatch(const Event& e) {
    switch (e.kind) {
      case Ev::master_arrive: return master_arrive(e.m);
      case Ev::master_process: return master_process();
      case Ev::relay_ready: return relay_ready(e.m.worker);
      case Ev::relay_arrive: return relay_arrive(e.m);
      case Ev::relay_receive: return relay_receive(e.m);
      case Ev::relay_heartbeat: return relay_heartbeat(e.m.worker);
      case Ev::relay_ask: return relay_ask_now(e.m.worker);
      default: break;
    }
    SimWorker& w = m_workers[e.m.worker];
    switch (e.kind) {
      case Ev::worker_ready: return worker_ready(w, e.m.worker);
      case Ev::worker_arrive: return w.gone ? void() : worker_receive(w, e.m);
      case Ev::render_done: return w.gone ? void() : render_done(w, e.m);
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

  // ------------------------------------------------------------------ network
  // From a worker to its master, or to its site's relay.
  void send_up(SimWorker& w, uint32_t index, Message m, double bytes = k_small_message) {
    m.worker = index;
    Event e;
    e.t = w.up.deliver(m_now, bytes, m_rng);
    e.kind = w.spec.site >= 0 ? Ev::relay_arrive : Ev::master_arrive;
    e.m = std::move(m);
    push(std::move(e));
  }
  // From the master to a peer: a flat worker, or a relay.
  void send_down(uint32_t peer, Message m, double bytes = k_small_message) {
    m_job.bytes_out(peer + 1, static_cast<uint64_t>(bytes));
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
  bool is_relay(uint32_t peer) const { return peer >= m_workers.size(); }

  // ------------------------------------------------------------------ worker side
  void worker_ready(SimWorker& w, uint32_t index) {
    if (w.gone) return;
    w.started = true;
    send_up(w, index, message(Msg::hello));
    request_work(w, index);
    push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
  }

  void request_work(SimWorker& w, uint32_t index) {
    if (w.assigned >= w.capacity()) return;
    Message m = message(Msg::request);
    m.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
    send_up(w, index, m);
    w.last_request = m_now;
  }

  void heartbeat(SimWorker& w, uint32_t index) {
    send_up(w, index, message(Msg::heartbeat));
    // A request the master could not serve is forgotten: ask again while there is room.
    if (m_now - w.last_request >= m_o.scheduler.heartbeat_interval) request_work(w, index);
    push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
  }

  void worker_receive(SimWorker& w, const Message& m) {
    if (m.kind == Msg::assign) {
      ++w.assigned;
      w.queue.push_back(Task{m.attempt, m.block, m_now, m_now, false});
      start_tasks(w, m.worker);
    } else if (m.kind == Msg::cancel) {
      for (Task& t : w.queue)
        if (t.attempt == m.attempt) t.cancelled = true;
      for (Task& t : w.running)
        if (t.attempt == m.attempt) t.cancelled = true;
    }
  }

  double render_time(const SimWorker& w, const Block& b) const {
    Block in_map = b;
    in_map.frame = std::min(b.frame, m_costs.frames());
    return m_costs.cost(in_map) / w.spec.speed;
  }

  void start_tasks(SimWorker& w, uint32_t index) {
    while (w.busy < w.spec.threads && !w.queue.empty()) {
      Task t = w.queue.front();
      w.queue.pop_front();
      t.started = m_now;
      ++w.busy;
      t.thread = static_cast<int>(std::find(w.thread_busy.begin(), w.thread_busy.end(), false) - w.thread_busy.begin());
      w.thread_busy[static_cast<size_t>(t.thread)] = true;
      // A task cancelled while queued is dropped by the render thread at once.
      const double cpu = t.cancelled ? 0 : render_time(w, t.block) + block_overhead(w.spec, m_o);
      const double took = w.quota.empty() ? cpu : w.quota[static_cast<size_t>(t.thread)].run(m_now, cpu) - m_now;
      w.running.push_back(t);
      Event e;
      e.t = m_now + took;
      e.kind = Ev::render_done;
      e.m.worker = index;
      e.m.attempt = t.attempt;
      push(std::move(e));
    }
  }

  void render_done(SimWorker& w, const Message& m) {
    auto it = std::find_if(w.running.begin(), w.running.end(), [&](const Task& t) { return t.attempt == m.attempt; });
    if (it == w.running.end()) return;
    Task t = *it;
    w.running.erase(it);
    --w.busy;
    w.thread_busy[static_cast<size_t>(t.thread)] = false;
    --w.assigned;
    if (!t.cancelled) {
      Message r = message(Msg::result);
      r.attempt = t.attempt;
      r.block = t.block;
      // As a real worker reports it: under a quota, wall time with the throttling (not the overhead).
      r.render = w.quota.empty() ? render_time(w, t.block)
                                 : std::max(0.0, (m_now - t.started) - block_overhead(w.spec, m_o));
      r.queued = t.started - t.arrived;
      r.bytes = static_cast<uint64_t>(static_cast<double>(t.block.pixels()) * m_o.bytes_per_pixel * m_o.payload_ratio);
      send_up(w, m.worker, r, k_result_header + static_cast<double>(r.bytes));
    }
    request_work(w, m.worker);
    start_tasks(w, m.worker);
  }

  // ------------------------------------------------------------------ relay side
  uint32_t relay_peer(uint32_t site) const { return static_cast<uint32_t>(m_workers.size()) + site; }
  static WorkerId local_id(uint32_t worker) { return worker + 1; }

  void relay_send_up(uint32_t site, Message m, double bytes = k_small_message) {
    m.worker = relay_peer(site);
    Event e;
    e.t = m_sites[site].up.deliver(m_now, bytes, m_rng);
    e.kind = Ev::master_arrive;
    e.m = std::move(m);
    push(std::move(e));
  }

  // To a site worker over its LAN link.
  void relay_send_down(uint32_t worker, Message m) {
    m.worker = worker;
    Event e;
    e.t = m_workers[worker].down.deliver(m_now, k_small_message, m_rng);
    e.kind = Ev::worker_arrive;
    e.m = std::move(m);
    push(std::move(e));
  }

  // Assigns under the relay's local ids.
  void relay_deliver(const std::vector<SiteAssignment>& assigned) {
    for (const SiteAssignment& a : assigned) {
      Message out = message(Msg::assign);
      out.attempt = a.local;
      out.block = a.lease.block;
      relay_send_down(a.worker - 1, out);
    }
  }

  // The real relay's ask rule: after whatever changed its want or freed room under the master's
  // cap (a worker's request, result or departure, a cancel) and once per heartbeat interval, at
  // most once per poll turn.
  void relay_ask(uint32_t site) {
    if (m_sites[site].ask_due) return;
    m_sites[site].ask_due = true;
    push(m_now + k_relay_poll_turn, Ev::relay_ask, site);
  }
  void relay_ask_now(uint32_t site) {
    m_sites[site].ask_due = false;
    const std::optional<RelayAsk> ask = m_sites[site].relay.ask();
    if (!ask) return;
    Message m = message(Msg::request);
    m.credits = static_cast<uint32_t>(ask->credits);
    m.unstarted = static_cast<uint32_t>(ask->queued);
    relay_send_up(site, m);
  }

  // A relay's hello: first for the site as configured, then again when it grew or shrank.
  void relay_announce(uint32_t site, int threads, int members) {
    SimSite& s = m_sites[site];
    s.threads = threads;
    s.members = members;
    Message m = message(Msg::hello);
    m.threads = threads;
    m.members = members;
    relay_send_up(site, m);
  }

  void relay_ready(uint32_t site) {
    relay_announce(site, m_sites[site].threads, m_sites[site].members);
    push(m_now + m_o.scheduler.heartbeat_interval, Ev::relay_heartbeat, site);
  }

  void relay_worker_gone(uint32_t site, uint32_t worker) {
    SimSite& s = m_sites[site];
    relay_deliver(s.relay.worker_left(local_id(worker), m_now));
    if (s.relay.threads() != s.threads || s.relay.members() != s.members)
      relay_announce(site, s.relay.threads(), s.relay.members());
  }

  // A site worker's message, over its LAN link.
  void relay_arrive(const Message& m) {
    const SimWorker& w = m_workers[m.worker];
    const uint32_t site = static_cast<uint32_t>(w.spec.site);
    SimRelay& relay = m_sites[site].relay;
    const WorkerId local = local_id(m.worker);
    relay.heard(local, m_now);
    switch (m.kind) {
      case Msg::hello: relay.worker_joined(local, w.spec.threads, m_now); return;
      case Msg::request: relay_deliver(relay.worker_request(local, static_cast<int>(m.credits), m_now)); break;
      case Msg::result:
        if (std::optional<ForwardedResult> f = relay.worker_finished(local, m.attempt, m.render)) {
          Message up = m;
          up.attempt = f->lease.upstream;
          up.queued += f->waited;  // queueing at the relay, not the WAN's time
          relay_send_up(site, up, k_result_header + static_cast<double>(m.bytes));
        }
        break;
      case Msg::leave: relay_worker_gone(site, m.worker); break;
      default: return;
    }
    relay_ask(site);
  }

  // The master's message to a relay, over the WAN.
  void relay_receive(const Message& m) {
    SimRelay& relay = m_sites[m.site].relay;
    switch (m.kind) {
      case Msg::assign: return relay_deliver(relay.leased(m.attempt, m.block, m_now));
      case Msg::cancel:
        for (const SiteAssignment& held : relay.withdrawn(m.attempt)) {
          Message out = message(Msg::cancel);
          out.attempt = held.local;
          relay_send_down(held.worker - 1, out);
        }
        return relay_ask(m.site);
      case Msg::recall: {
        // Answered even when nothing was unstarted: the master stops waiting.
        Message back = message(Msg::released);
        back.attempts = relay.recall(m.attempts);
        const double bytes = k_small_message + 8.0 * static_cast<double>(back.attempts.size());
        return relay_send_up(m.site, std::move(back), bytes);
      }
      default: return;
    }
  }

  void relay_heartbeat(uint32_t site) {
    SimSite& s = m_sites[site];
    // A relay whose workers are all gone stops too (the master then declares it dead).
    if (std::all_of(s.workers.begin(), s.workers.end(), [&](uint32_t w) { return m_workers[w].gone; })) return;
    relay_send_up(site, message(Msg::heartbeat));
    const double limit = m_o.scheduler.heartbeat_interval * m_o.scheduler.liveness;
    for (const WorkerId silent : s.relay.silent_workers(m_now, limit)) relay_worker_gone(site, silent - 1);
    relay_ask(site);
    push(m_now + m_o.scheduler.heartbeat_interval, Ev::relay_heartbeat, site);
  }

  // ------------------------------------------------------------------ master side
  void master_arrive(const Message& m) {
    m_inbox.push_back(m);
    if (!m_master_scheduled) {
      m_master_scheduled = true;
      push(std::max(m_now, m_master_busy_until), Ev::master_process, 0);
    }
  }

  void master_process() {
    Message m = m_inbox.front();
    m_inbox.pop_front();
    ++m_messages_in;
    if (is_relay(m.worker)) {
      handle_relay(m);
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

  void handle(const Message& m) {
    SimWorker& w = m_workers[m.worker];
    const WorkerId id = m.worker + 1;
    if (m.kind == Msg::hello) {
      if (w.joined) return;
      w.joined = true;
      m_job.join(id, w.spec.name, w.spec.threads, m_now);
      return;
    }
    if (!w.joined) return;  // declared dead or left: the real master answers "not joined"
    m_job.heard(id, m_now);
    switch (m.kind) {
      case Msg::request: serve(m.worker, static_cast<int>(m.credits)); break;
      case Msg::result: on_result(id, m); break;
      case Msg::heartbeat:
        // The real master measures the round trip with pings; the model knows it.
        m_job.round_trip(id, w.up.latency + w.down.latency + (w.up.jitter + w.down.jitter) / 2);
        break;
      case Msg::leave:
        m_job.leave(id, m_now, false);
        w.joined = false;
        break;
      default: break;
    }
  }

  void serve(uint32_t peer, int credits) {
    for (const Assignment& a : m_job.request(peer + 1, m_now, credits)) {
      m_first_assignment = std::min(m_first_assignment, m_now);
      Message out = message(Msg::assign);
      out.attempt = a.attempt;
      out.block = a.block;
      send_down(peer, out);
    }
  }

  // The master's side of a relay: a participant as a worker is, plus the supervisor.
  void handle_relay(const Message& m) {
    SimSite& site = m_sites[m.worker - m_workers.size()];
    const WorkerId id = m.worker + 1;
    if (m.kind == Msg::hello) {
      if (!site.joined) {
        site.joined = true;
        m_job.join(id, site.relay.spec().name, m.threads, m_now, m.members);
        m_supervisor.relay_joined(id);
      } else {
        m_job.resize(id, m.threads, m.members, m_now);  // its site grew or shrank
      }
      return;
    }
    if (!site.joined) return;
    m_job.heard(id, m_now);
    switch (m.kind) {
      case Msg::request: relay_request(m.worker, RelayAsk{static_cast<int>(m.credits), static_cast<int>(m.unstarted)}); break;
      case Msg::released:
        if (auto serve_now = m_supervisor.released(m_job, id, m.attempts))
          relay_request(serve_now->first - 1, serve_now->second);
        break;
      case Msg::result: on_result(id, m); break;
      case Msg::heartbeat: m_job.round_trip(id, site.up.latency + site.down.latency); break;
      default: break;
    }
  }

  // Master::on_request for a relay: a recall first once the pool is empty, else blocks.
  void relay_request(uint32_t peer, RelayAsk ask) {
    std::optional<SimRecall> recall;
    if (m_supervisor.holds_request(m_job.scheduler(), peer + 1, ask.credits, ask.queued, recall)) {
      if (recall) {
        Message out = message(Msg::recall);
        out.attempts = std::move(recall->attempts);
        send_down(recall->from - 1, out, k_small_message + 8.0 * static_cast<double>(out.attempts.size()));
      }
      return;
    }
    serve(peer, ask.credits);
  }

  void on_result(WorkerId id, const Message& m) {
    ResultReply reply = m_job.result(id, m.attempt, m_now, ResultReport{m.render, m.queued, m.bytes, 0});
    if (reply.outcome != ResultOutcome::accepted) return;
    m_last_accept = m_now;
    Block in_map = reply.block;
    in_map.frame = std::min(in_map.frame, m_costs.frames());
    m_longest = std::max(m_longest, m_costs.cost(in_map));
    for (const Cancel& c : reply.cancels) {
      Message out = message(Msg::cancel);
      out.attempt = c.attempt;
      send_down(c.worker - 1, out);
    }
  }

  void tick_if_due() {
    if (m_job.scheduler().next_deadline() > m_now) return;
    for (WorkerId dead : m_job.tick(m_now)) {
      if (is_relay(dead - 1)) {
        m_sites[dead - 1 - m_workers.size()].joined = false;
        m_supervisor.relay_gone(dead);
      } else {
        m_workers[dead - 1].joined = false;
      }
      ++m_dead;
    }
  }

  void schedule_tick() {
    double d = m_job.scheduler().next_deadline();
    // A deadline that tick() left in the past would re-fire at the same instant forever:
    // virtual time must move on, as real time does for the master.
    if (d <= m_now) d = std::nextafter(m_now, k_never);
    if (d < m_tick_at && d < k_never) {
      m_tick_at = d;
      push(m_tick_at, Ev::tick, 0);
    }
  }

  // For the bound: a site worker's way to the master is its LAN and its site's WAN.
  std::vector<SimWorkerSpec> specs() const {
    std::vector<SimWorkerSpec> out;
    out.reserve(m_workers.size());
    for (const SimWorker& w : m_workers) {
      out.push_back(w.spec);
      if (w.spec.site >= 0) out.back().latency += m_sites[static_cast<size_t>(w.spec.site)].up.latency;
    }
    return out;
  }

  std::vector<std::string> summary(const SimResult& r) const {
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
            json_field("recalled_blocks", r.recalled_blocks)};
  }

  const CostMap& m_costs;
  SimOptions m_o;
  JobController m_job;
  std::mt19937_64 m_rng;
  SimSupervisor m_supervisor;
  std::vector<SimWorker> m_workers;
  std::vector<SimSite> m_sites;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> m_events;
  std::deque<Message> m_inbox;
  bool m_master_scheduled = false;
  double m_master_busy_until = 0;
  double m_tick_at = k_never;
  double m_now = 0;
  double m_last_accept = 0;
  double m_longest = 0;
  double m_first_assignment = k_never;
  uint64_t m_seq = 0, m_count = 0, m_dead = 0, m_messages_in = 0, m_messages_out = 0;
};

}  // namespace

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
