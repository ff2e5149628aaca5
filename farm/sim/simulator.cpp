#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <random>
#include <sstream>

#include "base/json_text.h"
#include "control/job_controller.h"
#include "sim/quota_clock.h"

namespace farm {

namespace {

constexpr double k_never = std::numeric_limits<double>::infinity();
// Wire sizes of the small messages (FlatBuffers + ZeroMQ framing), bytes.
constexpr double k_small_message = 64;
constexpr double k_result_header = 96;

enum class Msg : uint8_t { hello, request, result, heartbeat, leave, assign, cancel };

struct Message {
  Msg kind = Msg::hello;
  uint32_t worker = 0;  // index into the workers (0-based)
  AttemptId attempt = 0;
  uint32_t credits = 0;
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

enum class Ev : uint8_t { worker_ready, master_arrive, master_process, worker_arrive, render_done, heartbeat, fail, leave, tick };

struct Event {
  double t = 0;
  uint64_t seq = 0;
  Ev kind = Ev::tick;
  Message m;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

// One direction of a worker's link: FIFO, serialised at `bandwidth`, then latency + jitter.
struct Link {
  double latency = 0, jitter = 0, bandwidth = 0;
  double free_at = 0, last_arrival = 0;
  double deliver(double now, double bytes, std::mt19937_64& rng) {
    double start = std::max(now, free_at);
    double done = start + (bandwidth > 0 ? bytes / bandwidth : 0);
    free_at = done;
    double arrival = done + latency + (jitter > 0 ? std::uniform_real_distribution<double>(0, jitter)(rng) : 0);
    arrival = std::max(arrival, last_arrival);  // a TCP stream never reorders
    last_arrival = arrival;
    return arrival;
  }
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
  Link up, down;
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

class Simulation {
 public:
  Simulation(const CostMap& costs, const std::vector<SimWorkerSpec>& specs, const SimOptions& o)
      : m_costs(costs), m_o(o), m_job(o.scheduler, o.trace), m_rng(o.seed) {
    m_workers.reserve(specs.size());
    for (const SimWorkerSpec& s : specs) {
      SimWorker w;
      w.spec = s;
      w.up = Link{s.latency, s.jitter, s.bandwidth};
      w.down = Link{s.latency, s.jitter, s.bandwidth};
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
    SimWorker& w = m_workers[e.m.worker];
    switch (e.kind) {
      case Ev::worker_ready: return worker_ready(w, e.m.worker);
      case Ev::master_arrive: return master_arrive(e.m);
      case Ev::master_process: return master_process();
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
    }
  }

  // ------------------------------------------------------------------ network
  void send_up(SimWorker& w, uint32_t index, Message m, double bytes = k_small_message) {
    m.worker = index;
    Event e;
    e.t = w.up.deliver(m_now, bytes, m_rng);
    e.kind = Ev::master_arrive;
    e.m = std::move(m);
    push(std::move(e));
  }
  void send_down(uint32_t index, Message m, double bytes = k_small_message) {
    SimWorker& w = m_workers[index];
    m.worker = index;
    m_job.bytes_out(index + 1, static_cast<uint64_t>(bytes));
    Event e;
    e.t = w.down.deliver(m_now, bytes, m_rng);
    e.kind = Ev::worker_arrive;
    e.m = std::move(m);
    push(std::move(e));
  }

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
    handle(m);
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
      case Msg::request:
        for (const Assignment& a : m_job.request(id, m_now, static_cast<int>(m.credits))) {
          m_first_assignment = std::min(m_first_assignment, m_now);
          Message out = message(Msg::assign);
          out.attempt = a.attempt;
          out.block = a.block;
          send_down(m.worker, out);
        }
        break;
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
      m_workers[dead - 1].joined = false;
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

  std::vector<SimWorkerSpec> specs() const {
    std::vector<SimWorkerSpec> out;
    out.reserve(m_workers.size());
    for (const SimWorker& w : m_workers) out.push_back(w.spec);
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
            json_raw_field("bound_honest_seconds", number(r.bound.honest()))};
  }

  const CostMap& m_costs;
  SimOptions m_o;
  JobController m_job;
  std::mt19937_64 m_rng;
  std::vector<SimWorker> m_workers;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> m_events;
  std::deque<Message> m_inbox;
  bool m_master_scheduled = false;
  double m_master_busy_until = 0;
  double m_tick_at = k_never;
  double m_now = 0;
  double m_last_accept = 0;
  double m_longest = 0;
  double m_first_assignment = k_never;
  uint64_t m_seq = 0, m_count = 0, m_dead = 0;
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

SimResult simulate(const CostMap& costs, const std::vector<SimWorkerSpec>& workers, const SimOptions& options) {
  Simulation sim(costs, workers, options);
  return sim.run();
}

}  // namespace farm
