// Several jobs sharing the simulated workers (sim/simulator.h, simulate_jobs): the service's side
// of `farm serve` (farm/service/service.cpp), modelled call for call. Which job a worker serves
// is decided by the service's own JobDispatch, called where ServiceHost calls it: add_job at
// submission, set_work for every job before each decision (refresh_work), decide at each request,
// assign at a move and at a job's end, worker_joined/worker_left, remove_job when a job ends.
// Each job has its own JobController, driven as a ServedJob drives its own.
#include <stdexcept>
#include <utility>

#include "base/json_text.h"
#include "sim/simulation_state.h"

namespace farm {

namespace sim_detail {

Simulation::Simulation(const std::vector<SimJob>& jobs, const std::vector<SimWorkerSpec>& specs, const SimOptions& o)
    : m_o(o),
      m_service(true),
      m_rng(o.seed),
      m_failure_rng(o.seed ^ 0xfa11'fa11'fa11'fa11ULL),
      m_supervisor(false, 0, o.scheduler.heartbeat_interval * o.scheduler.liveness) {
  if (jobs.empty()) throw std::invalid_argument("simulate_jobs: no jobs");
  for (const SimJob& j : jobs) {
    if (!j.costs) throw std::invalid_argument("simulate_jobs: job '" + j.name + "' has no cost map");
    SimJob spec = j;
    // The service's heartbeat and liveness for every job, as `farm serve` gives its jobs.
    spec.scheduler.heartbeat_interval = o.scheduler.heartbeat_interval;
    spec.scheduler.liveness = o.scheduler.liveness;
    m_jobs.push_back(std::make_unique<SimJobState>(spec, nullptr));
    m_jobs.back()->first_joined.assign(specs.size(), k_never);
  }
  for (const SimWorkerSpec& s : specs) {
    if (s.site >= 0) throw std::invalid_argument("simulate_jobs: worker '" + s.name + "' sits behind a site (not modelled with jobs)");
    if (s.render_failures > 0)
      throw std::invalid_argument("simulate_jobs: worker '" + s.name + "' has renderer failures (not modelled with jobs)");
  }
  add_workers(specs);
}

// ServiceHost::on_hello and on_message: the worker's message to the job it is in, or the
// service's own (a request, a join).
void Simulation::handle_service(const Message& m) {
  SimWorker& w = m_workers[m.worker];
  const WorkerId id = m.worker + 1;
  if (m.kind == Msg::hello) {
    if (w.joined) return;
    w.joined = true;
    w.serving = -1;
    w.last_heard = m_now;
    m_dispatch.worker_joined(id, w.spec.threads, {"native"}, m_now);
    m_unplaced.insert(m.worker);
    serve_request(m.worker, 0, false);  // a job for it now, if any wants it
    return;
  }
  if (!w.joined) return;  // declared dead or left
  w.last_heard = m_now;
  SimJobState* in = w.serving >= 0 ? m_jobs[static_cast<size_t>(w.serving)].get() : nullptr;
  if (in) in->controller.heard(id, m_now);
  switch (m.kind) {
    case Msg::request: serve_request(m.worker, static_cast<int>(m.credits), true); break;
    case Msg::result:
      // A late result of a job it left (moved, paused, ended): nothing to do.
      if (in && static_cast<int>(m.job) == w.serving) {
        on_result(id, m, m.job);
        // Its last block: the job ends now, before the request is dispatched, so that no job of
        // lower priority gets a worker while this one is unfinished.
        if (in->controller.scheduler().done() && !in->paused) finish_job(m.job);
      }
      if (m.credits > 0 && w.joined) serve_request(m.worker, static_cast<int>(m.credits), true);
      break;
    case Msg::heartbeat:
      if (in) in->controller.round_trip(id, w.up.latency + w.down.latency + (w.up.jitter + w.down.jitter) / 2);
      break;
    case Msg::leave:
      if (in && in->controller.scheduler().has_worker(id)) in->controller.leave(id, m_now, false);
      drop_worker(m.worker);
      break;
    default: break;
  }
}

void Simulation::refresh_work() {
  // A job not started yet has all its blocks to hand out.
  for (uint32_t j = 0; j < m_jobs.size(); ++j) {
    const SimJobState& s = *m_jobs[j];
    if (!s.submitted || s.done) continue;
    const Scheduler& sched = s.controller.scheduler();
    const bool copies = sched.pending_blocks() == 0 && sched.outstanding_blocks() > 0 && s.spec.scheduler.max_copies > 1;
    m_dispatch.set_work(key_of(j), !s.ready || sched.pending_blocks() > 0, s.ready && copies);
  }
}

void Simulation::serve_request(uint32_t peer, int credits, bool request) {
  refresh_work();
  const SimWorker& w = m_workers[peer];
  const WorkerId id = peer + 1;
  const bool idle = w.serving < 0 || m_jobs[static_cast<size_t>(w.serving)]->controller.scheduler().attempts_of(id).empty();
  const DispatchDecision d = m_dispatch.decide(id, idle, m_now);
  if (d.kind == DispatchDecision::Kind::wait) return;
  const uint32_t to = static_cast<uint32_t>(d.job - 1);
  if (w.serving >= 0 && static_cast<uint32_t>(w.serving) == to) {
    if (request && credits > 0) serve(peer, credits, to);
    return;
  }
  move(peer, to);
}

// ServiceHost::move: out of its job (it holds none of its blocks), into the new one, welcomed.
void Simulation::move(uint32_t peer, uint32_t to) {
  SimWorker& w = m_workers[peer];
  const WorkerId id = peer + 1;
  SimJobState& target = *m_jobs[to];
  if (!target.started) {
    // ServiceHost::start: its setup runs beside the service's loop.
    target.started = true;
    target.ready = !(target.spec.setup > 0);
    if (!target.ready) {
      Event e;
      e.t = m_now + target.spec.setup;
      e.kind = Ev::job_change;
      e.m.job = to;
      e.m.kind = Msg::result;  // set up
      ++target.changes_due;
      push(std::move(e));
    }
  }
  if (!target.ready) {  // being set up: served again once it is (ServiceHost::take_up_set_up_jobs)
    target.turned_away.insert(peer);
    return;
  }
  if (w.serving >= 0) {
    SimJobState& from = *m_jobs[static_cast<size_t>(w.serving)];
    if (from.controller.scheduler().has_worker(id)) from.controller.leave(id, m_now, false);
    from.members.erase(peer);
  }
  m_dispatch.assign(id, key_of(to), m_now);
  w.serving = static_cast<int>(to);
  m_unplaced.erase(peer);
  target.members.insert(peer);
  target.first_joined[peer] = std::min(target.first_joined[peer], m_now);
  target.controller.join(id, w.spec.name, w.spec.threads, m_now);
  Message out = message(Msg::welcome);
  out.job = to;
  send_down(peer, out);
}

void Simulation::release_all(uint32_t j) {
  SimJobState& job = *m_jobs[j];
  for (uint32_t peer : job.members) {
    const WorkerId id = peer + 1;
    Message out = message(Msg::job_done);
    out.job = j;
    send_down(peer, out);
    if (job.controller.scheduler().has_worker(id)) job.controller.leave(id, m_now, false);
    m_dispatch.assign(id, 0, m_now);
    m_workers[peer].serving = -1;
    m_unplaced.insert(peer);
  }
  job.members.clear();
}

// ServiceHost::finish and retire: every member told (JobDone), then free at its next request.
void Simulation::finish_job(uint32_t j) {
  SimJobState& job = *m_jobs[j];
  job.worker_seconds = m_dispatch.total_worker_seconds(key_of(j), m_now);
  release_all(j);
  job.done = true;
  m_dispatch.remove_job(key_of(j), m_now);
}

void Simulation::drop_worker(uint32_t peer) {
  SimWorker& w = m_workers[peer];
  if (w.serving >= 0) m_jobs[static_cast<size_t>(w.serving)]->members.erase(peer);
  m_dispatch.worker_left(peer + 1, m_now);
  w.serving = -1;
  w.joined = false;
  m_unplaced.erase(peer);
}

void Simulation::place_unplaced() {
  const double silent = m_o.scheduler.heartbeat_interval * m_o.scheduler.liveness;
  const std::vector<uint32_t> idle(m_unplaced.begin(), m_unplaced.end());
  for (uint32_t peer : idle) {
    if (m_now - m_workers[peer].last_heard > silent) {
      drop_worker(peer);
      ++m_dead;
      continue;
    }
    if (m_workers[peer].serving < 0) serve_request(peer, 0, false);
  }
}

// A job's submission, pause, resume or new priority (the client calls of service_calls.cpp).
void Simulation::job_change(const Message& m) {
  SimJobState& job = *m_jobs[m.job];
  const JobKey key = key_of(m.job);
  --job.changes_due;
  if (m.kind == Msg::hello) {
    job.submitted = true;
    m_dispatch.add_job(key, job.spec.priority, "native", m_now);
  } else if (m.kind == Msg::result) {
    job.ready = !job.done;  // set up (ServiceHost::take_up_set_up_jobs): its turned-away workers asked again
    const std::set<uint32_t> waiting = std::exchange(job.turned_away, {});
    for (uint32_t peer : waiting)
      if (m_workers[peer].joined) serve_request(peer, 0, false);
  } else if (!job.submitted || job.done) {
    return;  // paused or changed before its submission, or after its end: the service refuses
  } else if (m.kind == Msg::leave) {
    job.paused = true;
    release_all(m.job);  // its leases back at once
    m_dispatch.set_paused(key, true);
  } else if (m.kind == Msg::request) {
    job.paused = false;
    m_dispatch.set_paused(key, false);
  } else if (m.kind == Msg::heartbeat) {
    m_dispatch.set_priority(key, job.spec.new_priority);
  }
  place_unplaced();
  schedule_tick();
}

void Simulation::service_tick() {
  for (uint32_t j = 0; j < m_jobs.size(); ++j) {
    SimJobState& job = *m_jobs[j];
    if (!job.ready || job.done) continue;
    if (job.controller.scheduler().next_deadline() <= m_now) {
      for (WorkerId dead : job.controller.tick(m_now)) {
        drop_worker(dead - 1);
        ++m_dead;
      }
    }
    // A job whose last result came while it was paused ends once resumed (ServiceHost::turn).
    if (!job.paused && job.controller.scheduler().done()) finish_job(j);
  }
  place_unplaced();
}

SimResult Simulation::service_result(SimResult& r) {
  r.completed = true;
  r.first_assignment = k_never;
  for (uint32_t j = 0; j < m_jobs.size(); ++j) {
    SimJobState& job = *m_jobs[j];
    const Scheduler& sched = job.controller.scheduler();
    SimJobResult out;
    out.name = job.spec.name;
    out.priority = job.spec.priority;
    out.submit = job.spec.submit;
    out.completed = job.done;
    out.paused = job.paused;
    out.start = job.first_assignment < k_never ? job.first_assignment : -1;
    out.finish = job.done ? job.last_accept : -1;
    out.worker_seconds = job.done ? job.worker_seconds : m_dispatch.total_worker_seconds(key_of(j), m_now);
    for (double t : job.first_joined) {
      if (t == k_never) continue;
      ++out.workers;
      out.first_worker = out.first_worker < 0 ? t : std::min(out.first_worker, t);
      out.every_worker = std::max(out.every_worker, t);
    }
    out.blocks = sched.completed_blocks();
    out.reassignments = sched.reassignments();
    r.completed = r.completed && job.done;
    r.makespan = std::max(r.makespan, job.done ? job.last_accept : m_now);
    r.first_assignment = std::min(r.first_assignment, job.first_assignment);
    r.blocks += out.blocks;
    r.reassignments += out.reassignments;
    r.late_results += sched.late_results();
    for (const PolicyDecision& d : sched.decisions()) r.halvings += d.to_size < d.from_size;
    r.longest_block_cost = std::max(r.longest_block_cost, job.longest);
    out.stats_json = job.controller.stats().json(sched, out.finish >= 0 ? out.finish : m_now,
                                                 {json_field("simulated", true), json_field("scene", out.name),
                                                  json_field("priority", out.priority), json_field("completed", out.completed)});
    r.jobs.push_back(std::move(out));
  }
  if (r.first_assignment == k_never) r.first_assignment = 0;
  r.stats_json = service_stats(r);
  return r;
}

// The --stats JSON with jobs: the run's summary, and per job what it got and its own statistics.
std::string Simulation::service_stats(const SimResult& r) const {
  auto number = [](double v) { return v >= 0 ? fixed(v) : std::string("null"); };
  std::string jobs;
  for (const SimJobResult& j : r.jobs) {
    if (!jobs.empty()) jobs += ",\n";
    jobs += "{" + json_field("name", j.name) + ", " + json_field("priority", j.priority) + ", " +
            json_field("completed", j.completed) + ", " +
            json_field("paused", j.paused) + ", " + json_raw_field("submit", fixed(j.submit)) + ", " +
            json_raw_field("start", number(j.start)) + ", " + json_raw_field("finish", number(j.finish)) + ", " +
            json_raw_field("makespan", number(j.makespan())) + ", " +
            json_raw_field("first_worker", number(j.first_worker)) + ", " +
            json_raw_field("every_worker", number(j.every_worker)) + ", " + json_field("workers", j.workers) + ", " +
            json_raw_field("worker_seconds", fixed(j.worker_seconds)) + ", " + json_field("blocks", j.blocks) + ", " +
            json_field("reassignments", j.reassignments) + ", " + json_raw_field("stats", j.stats_json) + "}";
  }
  return "{" + json_field("simulated", true) + ", " + json_field("service", true) + ", " +
         json_field("completed", r.completed) + ", " + json_raw_field("makespan", fixed(r.makespan)) + ", " +
         json_field("seed", m_o.seed) + ", " + json_field("events", r.events) + ", " +
         json_field("workers", m_workers.size()) + ", " + json_field("messages_in", r.messages_in) + ", " +
         json_field("messages_out", r.messages_out) + ", " + json_field("dead_workers", r.dead_workers) + ",\n" +
         json_raw_field("jobs", "[\n" + jobs + "\n]") + "}\n";
}

}  // namespace sim_detail

SimResult simulate_jobs(const std::vector<SimJob>& jobs, const std::vector<SimWorkerSpec>& workers,
                        const SimOptions& options) {
  sim_detail::Simulation sim(jobs, workers, options);
  return sim.run();
}

}  // namespace farm
