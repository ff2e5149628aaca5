// The service's loop (service_host.h): binding, the turn of every job, the heartbeats, workers
// joining, moving between jobs and leaving, and a job's life from activation to its end. What
// each client call does: service_calls.cpp.
#include "service/service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "backend/scene_kind.h"
#include "base/json_text.h"
#include "base/memory.h"
#include "security/endpoint_kind.h"
#include "service/service_host.h"
#include "transport/endpoint_check.h"
#include "transport/flow.h"
#include "transport/sockets.h"

namespace farm {
namespace service_detail {

namespace fs = std::filesystem;

// Every renderer a worker may have: the job's Welcome is where a worker says it lacks one (it
// then sits that job out, as under `farm master`).
const std::set<std::string> k_any_renderer = {"native", "povray", "blender"};

// How often a job's progress is written to the queue (not per block: the journal has those).
constexpr double k_progress_interval = 5.0;

double ServiceHost::wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

ServiceHost::ServiceHost(const ServiceOptions& o) : m_o(o) {}

ServiceHost::~ServiceHost() {
  // The jobs go first (their journals closed, still unfinished in the queue: a restart resumes
  // them; setups still running are waited for), then the socket, then the ZAP handler.
  m_active.clear();
  m_abandoned.clear();
  m_endpoint.reset();
}

RunStatus ServiceHost::open() {
  if (!m_o.curve && !m_o.insecure && !security::is_loopback_endpoint(m_o.bind)) {
    spdlog::error("refusing to serve {} without keys: it is reachable from the network", m_o.bind);
    return RunStatus::bad_input;
  }
  if (std::string why = endpoint_problem(m_o.bind, EndpointUse::bind); !why.empty()) {
    spdlog::error("the endpoint to bind: {}", why);
    return RunStatus::bad_input;
  }
  try {
    fs::create_directories(fs::path(m_o.state_dir) / "jobs");
    m_store = std::make_unique<JobStore>((fs::path(m_o.state_dir) / "queue.sqlite").string());
    m_files = std::make_unique<AssetCache>((fs::path(m_o.state_dir) / "files").string());
    if (Status usable = m_files->probe(); !usable.ok()) throw std::runtime_error(usable.message());
    // Job folders laid out by an earlier run: laid out again for the jobs that resume.
    std::error_code ignored;
    fs::remove_all(fs::path(m_o.state_dir) / "files" / "jobs", ignored);
  } catch (const std::exception& e) {
    spdlog::error("the state folder '{}': {}", m_o.state_dir, error_text(e));
    return RunStatus::bad_input;
  }
  if (m_o.curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, m_o.curve->allowed);
  try {
    m_endpoint = std::make_unique<ServingEndpoint>(open_router_socket(m_ctx, m_o.bind, m_o.curve, k_max_block_side),
                                                   static_cast<ServingHandler&>(*this), "the farm service");
  } catch (const zmq::error_t& e) {
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return RunStatus::failure;
  }
  return RunStatus::ok;
}

void ServiceHost::resume_unfinished() {
  std::vector<JobRecord> unfinished = m_store->unfinished();
  // Oldest first: the dispatch breaks ties by age.
  std::sort(unfinished.begin(), unfinished.end(), [](const JobRecord& a, const JobRecord& b) { return a.id < b.id; });
  for (const JobRecord& r : unfinished) {
    spdlog::info("job {} '{}' ({}): taken up again{}", r.id, r.name, job_state_name(r.state),
                 r.state == JobState::running ? " from its journal" : "");
    if (std::string why = activate(r, true); !why.empty()) {
      if (Status s = m_store->set_state(r.id, JobState::failed, wall_now(), "service", why); !s.ok())
        spdlog::error("{}", s.message());
    }
  }
}

std::string ServiceHost::activate(const JobRecord& record, bool resume) {
  auto a = std::make_unique<ActiveJob>();
  a->record = record;
  a->resume = resume;
  try {
    a->submission = parse_submission(record.spec);
  } catch (const std::exception& e) {
    return error_text(e);
  }
  a->renderer = scene_kind_name(scene_kind(a->submission.scene));
  m_dispatch.add_job(static_cast<JobKey>(record.id), record.priority, a->renderer, now());
  m_dispatch.set_paused(static_cast<JobKey>(record.id), record.state == JobState::paused);
  m_active[record.id] = std::move(a);
  return "";
}

std::string ServiceHost::start(ActiveJob& a) {
  const JobRecord& record = a.record;
  try {
    const fs::path dir = job_dir(record.id);
    fs::create_directories(dir / "images");
    a.scene_dir = m_files->materialize(static_cast<uint64_t>(record.id), a.submission.files, "service");
    a.options = submission_master_options(a.submission, a.scene_dir + "/" + a.submission.scene,
                                          (dir / "images").string(), (dir / "journal").string(), m_o.job_defaults);
    a.options.stats_path = (dir / "stats.json").string();  // the run's statistics, as --stats writes them
  } catch (const std::exception& e) {
    return error_text(e);
  }
  a.options.service_job = static_cast<uint64_t>(record.id);
  // A job that never started has no journal but the folder of an earlier, interrupted start may.
  a.options.resume = true;
  a.options.keep_live_view = m_page != nullptr;  // its own live view on the service's page
  a.setting_up = std::make_unique<ServedJob>(a.options, static_cast<JobHost&>(*this));
  // Setup reads files and renders a preview; it touches nothing of the loop's (no socket, no
  // queue), so it runs beside it.
  a.setup_done = std::async(std::launch::async, [job = a.setting_up.get()] { return job->setup(); });
  spdlog::info("job {} '{}' is being set up", record.id, record.name);
  return "";
}

void ServiceHost::take_up_set_up_jobs() {
  std::set<WorkerId> waiting;
  std::vector<std::pair<int64_t, std::string>> failed;  // failed after the loop: fail() retires the job
  for (auto& [id, ap] : m_active) {
    ActiveJob& a = *ap;
    if (!a.setup_done.valid() || a.setup_done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    const RunStatus set_up = a.setup_done.get();
    std::unique_ptr<ServedJob> job = std::move(a.setting_up);
    if (set_up != RunStatus::ok || job->start_live_view() != RunStatus::ok || job->open(*m_endpoint) != RunStatus::ok) {
      failed.emplace_back(id, job->failure().empty() ? "the job could not be set up" : job->failure());
      continue;
    }
    a.job = std::move(job);
    if (m_page) m_page->show(id, a.job->live_view());
    spdlog::info("job {} '{}' starts{}", id, a.record.name, a.resume ? " again from its journal" : "");
    // The workers sent here while it was set up: asked again now, not at their next request
    // (a heartbeat later), so a new job of a higher priority gets every worker it was given.
    waiting.insert(a.turned_away.begin(), a.turned_away.end());
    a.turned_away.clear();
  }
  for (const auto& [id, why] : failed) fail(id, why);
  for (WorkerId w : waiting)
    if (ServedPeer* p = m_endpoint->find(w)) serve_request(*p, nullptr);
  // Abandoned setups: gone once their thread is.
  m_abandoned.erase(std::remove_if(m_abandoned.begin(), m_abandoned.end(),
                                   [](const std::unique_ptr<ActiveJob>& a) {
                                     return a->setup_done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                                   }),
                    m_abandoned.end());
}

void ServiceHost::set_state(ActiveJob& a, JobState to, const std::string& who, const std::string& reason) {
  if (Status s = m_store->set_state(a.record.id, to, wall_now(), who, reason); !s.ok()) {
    spdlog::error("{}", s.message());
    return;
  }
  a.record.state = to;
}

ActiveJob* ServiceHost::job_of(WorkerId worker) {
  auto it = m_job_of.find(worker);
  if (it == m_job_of.end() || it->second == 0) return nullptr;
  auto a = m_active.find(it->second);
  return a == m_active.end() ? nullptr : a->second.get();
}

void ServiceHost::refresh_work() {
  // A job not started yet has all its blocks to hand out.
  for (auto& [id, a] : m_active)
    m_dispatch.set_work(static_cast<JobKey>(id), !a->job || a->job->has_pending(), a->job && a->job->wants_copies());
}

void ServiceHost::serve_request(ServedPeer& peer, const proto::WorkRequest* request) {
  refresh_work();
  ActiveJob* current = job_of(peer.id);
  const bool idle = !current || !current->job->holds_blocks(peer.id);
  const DispatchDecision d = m_dispatch.decide(peer.id, idle, now());
  if (d.kind == DispatchDecision::Kind::wait) return;
  if (current && static_cast<JobKey>(current->record.id) == d.job) {
    if (request) {
      proto::Message m = *request;
      current->job->on_message(peer, m);
    }
    return;
  }
  move(peer, static_cast<int64_t>(d.job));
}

void ServiceHost::move(ServedPeer& peer, int64_t to) {
  auto target = m_active.find(to);
  if (target == m_active.end()) return;
  if (!target->second->job) {
    if (!target->second->setup_done.valid()) {
      if (std::string why = start(*target->second); !why.empty()) {
        fail(to, why);
        return;  // the worker asks again, and goes elsewhere
      }
    }
    target->second->turned_away.insert(peer.id);  // served again the moment it is set up
    return;
  }
  if (ActiveJob* from = job_of(peer.id)) {
    spdlog::info("worker {} '{}' moves from job {} to job {}", peer.id, peer.name, from->record.id, to);
    from->job->release(peer.id, false);  // idle: it holds none of its blocks; the Welcome tells it
  } else {
    spdlog::info("worker {} '{}' serves job {}", peer.id, peer.name, to);
  }
  m_dispatch.assign(peer.id, static_cast<JobKey>(to), now());
  m_job_of[peer.id] = to;
  ActiveJob& a = *target->second;
  if (a.record.state == JobState::queued) set_state(a, JobState::running, "service");
  a.job->on_hello(peer, true, peer);  // joins its scheduler and is welcomed
}

void ServiceHost::release_all(ActiveJob& a) {
  if (!a.job) return;
  const std::set<WorkerId> members = a.job->members();
  for (WorkerId w : members) {
    a.job->release(w, true);
    m_dispatch.assign(w, 0, now());
    m_job_of[w] = 0;
  }
}

void ServiceHost::retire(int64_t id) {
  auto it = m_active.find(id);
  if (it == m_active.end()) return;
  ActiveJob& a = *it->second;
  if (a.job) {
    for (WorkerId w : a.job->members()) {  // told already (JobDone) by finish() or release_all()
      m_dispatch.assign(w, 0, now());
      m_job_of[w] = 0;
    }
  }
  m_dispatch.remove_job(static_cast<JobKey>(id), now());
  if (m_page) m_page->ended(id);
  std::error_code ignored;
  fs::remove_all(a.scene_dir, ignored);  // a setup still running fails on it, unheard
  if (a.setup_done.valid()) m_abandoned.push_back(std::move(it->second));
  m_active.erase(it);
}

void ServiceHost::finish(int64_t id) {
  ActiveJob& a = *m_active.at(id);
  const ServingEndpoint& e = *m_endpoint;
  const RunStatus status = a.job->finish([&] {
    return std::vector<std::string>{json_field("messages_in", e.messages_in()), json_field("messages_out", e.messages_out())};
  });
  m_store->set_progress(id, a.job->progress());
  if (status == RunStatus::ok) {
    const Scheduler& sched = a.job->scheduler();
    spdlog::info("job {} '{}' is done in {:.3f} s: {} block(s) rendered, {} taken from its journal", id, a.record.name,
                 a.job->makespan(), sched.completed_blocks(), sched.restored_blocks());
    set_state(a, JobState::done, "service");
    if (a.record.state == JobState::done) {  // recorded: the journal has served its purpose
      std::error_code ignored;
      fs::remove(a.options.journal_path, ignored);
    }
  } else {
    set_state(a, JobState::failed, "service", a.job->failure().empty() ? "its outputs could not be written" : a.job->failure());
  }
  retire(id);
}

void ServiceHost::fail(int64_t id, const std::string& why) {
  ActiveJob& a = *m_active.at(id);
  if (a.job) {
    a.job->failed(why);
    m_store->set_progress(id, a.job->progress());
    release_all(a);
  } else {
    spdlog::error("job {} '{}' cannot be rendered: {}", id, a.record.name, why);
  }
  set_state(a, JobState::failed, "service", why);
  retire(id);
}

// ------------------------------------------------------------------ workers

void ServiceHost::on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) {
  if (joined) {
    spdlog::info("worker {} '{}' joined the service with {} thread(s)", peer.id, peer.name, peer.threads);
    m_dispatch.worker_joined(peer.id, peer.threads, k_any_renderer, now());
    m_job_of[peer.id] = 0;
    serve_request(peer, nullptr);  // a job for it now, if any wants it
  } else if (ActiveJob* a = job_of(peer.id)) {
    a->job->on_hello(peer, false, before);
  }
}

void ServiceHost::on_heard(ServedPeer& peer, double) {
  if (ActiveJob* a = job_of(peer.id)) a->job->heard(peer.id, a->job->now());
}

void ServiceHost::on_round_trip(ServedPeer& peer, double seconds) {
  if (ActiveJob* a = job_of(peer.id)) a->job->round_trip(peer.id, seconds);
}

void ServiceHost::on_sent(const ServedPeer& peer, size_t bytes) {
  auto it = m_job_of.find(peer.id);
  if (it == m_job_of.end() || it->second == 0) return;
  auto a = m_active.find(it->second);
  if (a != m_active.end()) a->second->job->bytes_out(peer.id, bytes);
}

void ServiceHost::on_message(ServedPeer& peer, proto::Message& message) {
  ActiveJob* a = job_of(peer.id);
  if (auto* request = std::get_if<proto::WorkRequest>(&message)) return serve_request(peer, request);
  if (!a) return;  // a late message of a job it left (paused, cancelled, done): nothing to do
  if (auto* result = std::get_if<proto::Result>(&message)) {
    // The result first, for the job it belongs to; then its carried request, dispatched.
    const proto::WorkRequest next{result->next_credits, result->next_queued};
    result->next_credits = 0;
    const WorkerId id = peer.id;
    a->job->on_message(peer, message);
    // Its last block: the job ends now, before the request is dispatched, so that no job of lower
    // priority gets a worker while this one is still unfinished.
    if (a->job->done() && a->record.state != JobState::paused) finish(a->record.id);
    if (next.credits > 0)
      if (ServedPeer* again = m_endpoint->find(id)) serve_request(*again, &next);
    return;
  }
  const WorkerId id = peer.id;
  a->job->on_message(peer, message);
  if (ServedPeer* still = m_endpoint->find(id); still && job_of(id) == a) unless_sitting_out(*still, *a);
}

void ServiceHost::unless_sitting_out(ServedPeer& peer, ActiveJob& a) {
  const std::string why = a.job->sits_out(peer.id);
  if (why.empty()) return;
  spdlog::info("worker {} '{}' leaves job {}, which it cannot take part in, for the others", peer.id, peer.name,
               a.record.id);
  a.waiting_for = "worker '" + peer.name + "' cannot take part: " + why;
  a.job->release(peer.id, true);
  m_dispatch.exclude(peer.id, static_cast<JobKey>(a.record.id));
  m_dispatch.assign(peer.id, 0, now());
  m_job_of[peer.id] = 0;
}

void ServiceHost::on_quarantined(ServedPeer& peer) {
  if (ActiveJob* a = job_of(peer.id)) return a->job->on_quarantined(peer);  // drops it
  drop(peer.id);
}

void ServiceHost::drop(WorkerId worker) {
  if (ActiveJob* a = job_of(worker)) a->job->forget(worker);
  m_dispatch.worker_left(worker, now());
  m_job_of.erase(worker);
  m_endpoint->forget(worker);
}

// ------------------------------------------------------------------ the loop

void ServiceHost::turn() {
  take_up_set_up_jobs();
  const double t = now();
  std::vector<int64_t> ids;
  for (const auto& [id, a] : m_active) ids.push_back(id);
  for (int64_t id : ids) {
    auto it = m_active.find(id);
    if (it == m_active.end()) continue;
    ActiveJob& a = *it->second;
    if (!a.job) continue;  // not started: nothing of it runs
    for (WorkerId dead : a.job->tick(a.job->now())) {
      spdlog::warn("worker {} is silent: declared dead, its blocks of job {} go back to the pool", dead, id);
      drop(dead);
    }
    if (a.record.state == JobState::paused) continue;
    bool bad_scene = false;
    if (std::string why = a.job->abort_reason(a.job->members().size(), bad_scene); !why.empty()) {
      fail(id, why);
      continue;
    }
    if (a.job->done()) {
      finish(id);
      continue;
    }
    a.job->turn();
    if (t - a.last_progress_saved >= k_progress_interval) {
      m_store->set_progress(id, a.job->progress());
      a.last_progress_saved = t;
    }
  }
  // Workers without a job (just joined, or their job ended): one may be wanted now. Workers in
  // no job are watched here; a job's own scheduler watches its members.
  const double silent = m_o.job_defaults.scheduling.heartbeat_interval * m_o.job_defaults.scheduling.liveness;
  std::vector<WorkerId> idle, gone;
  for (const auto& [worker, job] : m_job_of) {
    if (job != 0) continue;
    const ServedPeer* p = m_endpoint->find(worker);
    if (!p || t - p->last_heard > silent) gone.push_back(worker);
    else idle.push_back(worker);
  }
  for (WorkerId w : gone) {
    spdlog::warn("worker {} is silent: it leaves the service", w);
    drop(w);
  }
  for (WorkerId w : idle)
    if (ServedPeer* p = m_endpoint->find(w)) serve_request(*p, nullptr);
}

RunStatus ServiceHost::run() {
  if (RunStatus opened = open(); opened != RunStatus::ok) return opened;
  if (RunStatus page = open_page(); page != RunStatus::ok) return page;
  resume_unfinished();
  const std::string endpoint = m_endpoint->socket().get(zmq::sockopt::last_endpoint);
  spdlog::info("farm service listening on {} (state '{}', {} job(s) taken up)", endpoint, m_o.state_dir, m_active.size());
  if (m_o.on_bound) m_o.on_bound(endpoint);
  const double interval = m_o.job_defaults.scheduling.heartbeat_interval;
  while (!(m_o.stop && m_o.stop->load())) {
    const double t = now();
    if (t - m_last_heartbeat >= interval) {
      m_endpoint->ping_all(t);
      m_last_heartbeat = t;
    }
    zmq::pollitem_t items[] = {{static_cast<void*>(m_endpoint->socket()), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, k_poll_slice);
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    m_endpoint->receive(now());
    turn();
    serve_page();
  }
  spdlog::info("the farm service stops; {} unfinished job(s) stay queued and resume at its next start", m_active.size());
  spdlog::info("the queue's database took {:.3f} s of the service's {:.3f} s", m_store->seconds(), now());
  return RunStatus::ok;
}

}  // namespace service_detail

RunStatus run_service(const ServiceOptions& options) {
  try {
    return service_detail::ServiceHost(options).run();
  } catch (const std::exception& e) {
    spdlog::error("the farm service failed: {}", error_text(e));
    return RunStatus::failure;
  }
}

}  // namespace farm
