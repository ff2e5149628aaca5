// A simulated worker (simulation_state.h): its requests and heartbeats, its queue and render
// threads, under a CPU quota if it has one, and its results.
#include "sim/simulation_state.h"

namespace farm::sim_detail {

void Simulation::worker_ready(SimWorker& w, uint32_t index) {
  if (w.gone) return;
  w.started = true;
  send_up(w, index, message(Msg::hello));
  // A master's worker has its scene loaded by now; the service's loads one per welcome.
  w.working = !m_service;
  request_work(w, index);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
}

void Simulation::request_work(SimWorker& w, uint32_t index) {
  if (!w.working || w.assigned >= w.capacity()) return;
  Message m = message(Msg::request);
  m.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
  send_up(w, index, m);
  asked(w, index);
}

void Simulation::asked(SimWorker& w, uint32_t index) {
  w.last_request = m_now;
  ++w.requests;
  if (!m_service) return;
  // The real worker looks at its clock on every turn of its loop, not only at heartbeats: under
  // the service, whose answer may be "wait", it asks again one interval after it last asked.
  Event e;
  e.t = m_now + m_o.scheduler.heartbeat_interval;
  e.kind = Ev::rerequest;
  e.m.worker = index;
  e.m.attempt = w.requests;
  push(std::move(e));
}

void Simulation::heartbeat(SimWorker& w, uint32_t index) {
  send_up(w, index, message(Msg::heartbeat));
  // A request the master could not serve is forgotten: ask again while there is room.
  // (Under the service, at one interval after it asked: Ev::rerequest.)
  if (!m_service && m_now - w.last_request >= m_o.scheduler.heartbeat_interval) request_work(w, index);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
}

void Simulation::worker_receive(SimWorker& w, const Message& m) {
  if (m.kind == Msg::assign) {
    // As the real worker: an assignment of a job it is not working on is ignored.
    if (!w.working || m.job != w.job) return;
    ++w.assigned;
    w.queue.push_back(Task{m.attempt, m.job, m.block, m_now, m_now, false});
    start_tasks(w, m.worker);
  } else if (m.kind == Msg::cancel) {
    for (Task& t : w.queue)
      if (t.attempt == m.attempt && t.job == m.job) t.cancelled = true;
    for (Task& t : w.running)
      if (t.attempt == m.attempt && t.job == m.job) t.cancelled = true;
  } else if (m.kind == Msg::welcome) {
    worker_welcome(w, m);
  } else if (m.kind == Msg::job_done) {
    if (m.job == w.job) worker_reset(w);
  }
}

// Worker::reset_job: the render pool goes, with what it held (under the service a worker moves
// only once it holds no block of its job, so this drops cancelled copies at most).
void Simulation::worker_reset(SimWorker& w) {
  w.queue.clear();
  w.running.clear();
  w.busy = 0;
  w.assigned = 0;
  std::fill(w.thread_busy.begin(), w.thread_busy.end(), false);
  w.working = false;
  ++w.load;  // a load under way is abandoned
}

// Worker::on_welcome: a new job; its scene is loaded (the job's load time, else the worker's
// start-up), then it asks for blocks.
void Simulation::worker_welcome(SimWorker& w, const Message& m) {
  if (w.working && m.job == w.job) return;  // a repeated welcome
  worker_reset(w);
  w.job = m.job;
  const double load = m_jobs[m.job]->spec.load >= 0 ? m_jobs[m.job]->spec.load : w.spec.startup;
  Event e;
  e.t = m_now + load;
  e.kind = Ev::loaded;
  e.m.worker = m.worker;
  e.m.job = m.job;
  e.m.attempt = w.load;
  push(std::move(e));
}

void Simulation::worker_loaded(SimWorker& w, const Message& m) {
  if (m.attempt != w.load || m.job != w.job) return;  // welcomed elsewhere meanwhile, or told it is over
  w.working = true;
  request_work(w, m.worker);
}

double Simulation::render_time(const SimWorker& w, const Task& t) const {
  const CostMap& costs = *m_jobs[t.job]->spec.costs;
  Block in_map = t.block;
  in_map.frame = std::min(t.block.frame, costs.frames());
  return costs.cost(in_map) / w.spec.speed;
}

void Simulation::start_tasks(SimWorker& w, uint32_t index) {
  while (w.busy < w.spec.threads && !w.queue.empty()) {
    Task t = w.queue.front();
    w.queue.pop_front();
    t.started = m_now;
    ++w.busy;
    t.thread = static_cast<int>(std::find(w.thread_busy.begin(), w.thread_busy.end(), false) - w.thread_busy.begin());
    w.thread_busy[static_cast<size_t>(t.thread)] = true;
    // A task cancelled while queued is dropped by the render thread at once.
    const double cpu = t.cancelled ? 0 : render_time(w, t) + block_overhead(w.spec, m_o);
    const double took = w.quota.empty() ? cpu : w.quota[static_cast<size_t>(t.thread)].run(m_now, cpu) - m_now;
    w.running.push_back(t);
    Event e;
    e.t = m_now + took;
    e.kind = Ev::render_done;
    e.m.worker = index;
    e.m.job = t.job;
    e.m.attempt = t.attempt;
    push(std::move(e));
  }
}

void Simulation::render_done(SimWorker& w, const Message& m) {
  auto it = std::find_if(w.running.begin(), w.running.end(),
                         [&](const Task& t) { return t.attempt == m.attempt && t.job == m.job; });
  if (it == w.running.end()) return;
  Task t = *it;
  w.running.erase(it);
  --w.busy;
  w.thread_busy[static_cast<size_t>(t.thread)] = false;
  --w.assigned;
  if (t.cancelled) {
    request_work(w, m.worker);
  } else if (w.spec.render_failures > 0 &&
             std::uniform_real_distribution<double>(0, 1)(m_failure_rng) < w.spec.render_failures) {
    // Its renderer failed: said at once (BlockFailed), the next request riding along as on a result.
    Message f = message(Msg::failed);
    f.job = t.job;
    f.attempt = t.attempt;
    f.block = t.block;
    if (w.assigned < w.capacity()) {
      f.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
      asked(w, m.worker);
    }
    send_up(w, m.worker, f);
  } else {
    Message r = message(Msg::result);
    r.job = t.job;
    r.attempt = t.attempt;
    r.block = t.block;
    // As a real worker reports it: under a quota, wall time with the throttling (not the overhead).
    r.render = w.quota.empty() ? render_time(w, t)
                               : std::max(0.0, (m_now - t.started) - block_overhead(w.spec, m_o));
    r.queued = t.started - t.arrived;
    r.bytes = static_cast<uint64_t>(static_cast<double>(t.block.pixels()) * m_o.bytes_per_pixel * m_o.payload_ratio);
    // As the real worker: its next request rides on the result.
    if (w.assigned < w.capacity()) {
      r.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
      asked(w, m.worker);
    }
    send_up(w, m.worker, r, k_result_header + static_cast<double>(r.bytes));
  }
  start_tasks(w, m.worker);
}

}  // namespace farm::sim_detail
