// The service's host (service.h): the endpoint, the queue, the uploaded files, the jobs it serves
// now and which worker serves which. Internal to farm/service: service.cpp is its loop, its
// workers and its jobs' lives; service_calls.cpp what each client call does.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "assets/asset_cache.h"
#include "control/job_dispatch.h"
#include "live/queue_server.h"
#include "master/served_job.h"
#include "queue/job_store.h"
#include "security/zap_handler.h"
#include "service/job_submission.h"
#include "service/service.h"
#include "serving/serving_endpoint.h"

namespace farm::service_detail {

// A job the service serves now (queued, running or paused). It becomes a ServedJob (its scene
// read, its image in memory, its journal open) only when a worker is first given to it: a queue
// of many large jobs holds no images until they run.
struct ActiveJob {
  JobRecord record;
  JobSubmission submission;
  std::string renderer;   // what a worker must run for it (backend/scene_kind.h's names)
  bool resume = false;    // taken up at a restart: its journal holds what was done
  MasterOptions options;  // the ServedJob holds a reference: an ActiveJob never moves
  std::unique_ptr<ServedJob> job;  // null until started
  // While it is set up (ServedJob::setup: its scene read, a factoring policy's preview) on a
  // thread of its own, so a large scene does not hold the loop and the other jobs' workers:
  // the job, and setup's outcome once ready. Declared in this order: the future's destructor
  // waits for the thread before the job it sets up goes.
  std::unique_ptr<ServedJob> setting_up;
  std::future<RunStatus> setup_done;
  std::set<WorkerId> turned_away;  // workers the dispatch sent here while it was set up
  std::string scene_dir;  // the job's files laid out under their names (removed at its end)
  double last_progress_saved = -1;
  std::string waiting_for;  // why workers left it: the last one that could not take part said so
};

class ServiceHost : private ServingHandler, private JobHost {
 public:
  explicit ServiceHost(const ServiceOptions& o);
  ~ServiceHost() override;
  RunStatus run();

 private:
  using Clock = std::chrono::steady_clock;
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  static double wall_now();  // seconds since the epoch, for the queue's records

  // ---- service.cpp: start, loop, workers, jobs' lives
  RunStatus open();
  void resume_unfinished();
  // The job joins the dispatch (no file is read yet). "" or why it cannot be served (its spec).
  std::string activate(const JobRecord& record, bool resume);
  // Its first worker is coming: its files laid out, then set up on a thread of its own (its
  // scene read, a preview). "" or why it cannot be rendered.
  std::string start(ActiveJob& a);
  // Jobs whose setup is done: their journals opened (resumed from them at a restart), their live
  // views shown; from then on they take workers. A setup that failed fails its job.
  void take_up_set_up_jobs();
  double progress_of(const ActiveJob& a) const { return a.job ? a.job->progress() : a.record.progress; }
  void turn();
  void finish(int64_t id);
  void fail(int64_t id, const std::string& why);
  // The job leaves the service's hands (done, failed, cancelled): its workers are free.
  void retire(int64_t id);
  // Its workers leave it (told to stop its blocks), and the dispatch is told.
  void release_all(ActiveJob& a);
  void refresh_work();
  // A worker asking for blocks, or one that holds no job: served from the job the dispatch picks.
  void serve_request(ServedPeer& peer, const proto::WorkRequest* request);
  void move(ServedPeer& peer, int64_t to);
  // After a message of the job's: a worker that now sits the job out (it refused it, or it was
  // benched) leaves it for other jobs, and gets it no more.
  void unless_sitting_out(ServedPeer& peer, ActiveJob& a);
  ActiveJob* job_of(WorkerId worker);
  void set_state(ActiveJob& a, JobState to, const std::string& who, const std::string& reason = "");

  // ServingHandler
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) override;
  void on_heard(ServedPeer& peer, double t) override;
  void on_message(ServedPeer& peer, proto::Message& message) override;
  void on_quarantined(ServedPeer& peer) override;
  void on_round_trip(ServedPeer& peer, double seconds) override;
  void on_sent(const ServedPeer& peer, size_t bytes) override;
  bool on_call(const std::string& identity, const std::string& client_key, proto::ServiceCall& call) override;
  // JobHost
  void drop(WorkerId worker) override;

  // ---- service_calls.cpp
  void reply(const std::string& identity, uint64_t call, bool ok, const std::string& body,
             std::vector<uint8_t> data = {});
  // Each answers its call's body; a call that cannot be done throws std::invalid_argument saying why.
  std::string call_submit(const std::string& owner, const std::string& body);
  std::string call_upload(const std::string& body, const std::vector<uint8_t>& data);
  std::string call_jobs(const std::string& body);
  std::string call_job(const std::string& body);
  std::string call_control(const std::string& command, const std::string& caller, const std::string& body);
  std::string call_fetch(const std::string& body, std::vector<uint8_t>& data);
  std::string call_stats(const std::string& body, std::vector<uint8_t>& data);
  std::string job_json(const JobRecord& r) const;
  // The job's record, or a refusal naming the id.
  JobRecord record_of(int64_t id) const;
  // A key as people read it: the name its allow-list gives it, else its first characters.
  std::string owner_name(const std::string& key) const;
  // STATE/jobs/ID: its journal, images and statistics.
  std::filesystem::path job_dir(int64_t id) const { return std::filesystem::path(m_o.state_dir) / "jobs" / std::to_string(id); }
  // ---- service_page.cpp: the web page's texts, and its controls run as the page's caller
  RunStatus open_page();
  void serve_page();
  bool may_control(const std::string& caller, const JobRecord& r) const;

  const ServiceOptions& m_o;
  Clock::time_point m_start = Clock::now();
  zmq::context_t m_ctx;
  std::unique_ptr<security::ZapHandler> m_zap;  // outlives the socket it guards
  std::unique_ptr<ServingEndpoint> m_endpoint;
  std::unique_ptr<JobStore> m_store;
  std::unique_ptr<AssetCache> m_files;  // uploads, content-addressed: STATE/files
  JobDispatch m_dispatch;
  std::map<int64_t, std::unique_ptr<ActiveJob>> m_active;
  // Jobs that ended (cancelled) while being set up: kept until their setup thread is done with them.
  std::vector<std::unique_ptr<ActiveJob>> m_abandoned;
  std::map<WorkerId, int64_t> m_job_of;  // every joined worker: its job, 0 for none
  double m_last_heartbeat = -1;
  std::unique_ptr<QueueServer> m_page;  // --http
  double m_last_published = -1;
};

// The caller a control from the page is made as: whoever has the page (its token on a
// non-loopback address) is the service's operator, and may control every job.
inline constexpr const char* k_page_caller = "page";

// The name a client key goes by in listings and ownership: "local" without keys (loopback).
std::string owner_of(const std::string& client_key);

}  // namespace farm::service_detail
