// A simulated worker (simulation_state.h): its requests and heartbeats, its queue and render
// threads, under a CPU quota if it has one, and its results.
#include "sim/simulation_state.h"

namespace farm::sim_detail {

void Simulation::worker_ready(SimWorker& w, uint32_t index) {
  if (w.gone) return;
  w.started = true;
  send_up(w, index, message(Msg::hello));
  request_work(w, index);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
}

void Simulation::request_work(SimWorker& w, uint32_t index) {
  if (w.assigned >= w.capacity()) return;
  Message m = message(Msg::request);
  m.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
  send_up(w, index, m);
  w.last_request = m_now;
}

void Simulation::heartbeat(SimWorker& w, uint32_t index) {
  send_up(w, index, message(Msg::heartbeat));
  // A request the master could not serve is forgotten: ask again while there is room.
  if (m_now - w.last_request >= m_o.scheduler.heartbeat_interval) request_work(w, index);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::heartbeat, index);
}

void Simulation::worker_receive(SimWorker& w, const Message& m) {
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

double Simulation::render_time(const SimWorker& w, const Block& b) const {
  Block in_map = b;
  in_map.frame = std::min(b.frame, m_costs.frames());
  return m_costs.cost(in_map) / w.spec.speed;
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

void Simulation::render_done(SimWorker& w, const Message& m) {
  auto it = std::find_if(w.running.begin(), w.running.end(), [&](const Task& t) { return t.attempt == m.attempt; });
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
    f.attempt = t.attempt;
    f.block = t.block;
    if (w.assigned < w.capacity()) {
      f.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
      w.last_request = m_now;
    }
    send_up(w, m.worker, f);
  } else {
    Message r = message(Msg::result);
    r.attempt = t.attempt;
    r.block = t.block;
    // As a real worker reports it: under a quota, wall time with the throttling (not the overhead).
    r.render = w.quota.empty() ? render_time(w, t.block)
                               : std::max(0.0, (m_now - t.started) - block_overhead(w.spec, m_o));
    r.queued = t.started - t.arrived;
    r.bytes = static_cast<uint64_t>(static_cast<double>(t.block.pixels()) * m_o.bytes_per_pixel * m_o.payload_ratio);
    // As the real worker: its next request rides on the result.
    if (w.assigned < w.capacity()) {
      r.credits = static_cast<uint32_t>(w.capacity() - w.assigned);
      w.last_request = m_now;
    }
    send_up(w, m.worker, r, k_result_header + static_cast<double>(r.bytes));
  }
  start_tasks(w, m.worker);
}

}  // namespace farm::sim_detail
