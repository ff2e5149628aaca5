// The farm service's web page (`farm serve --http ADDR:PORT`, docs/service.md): the queue with
// its controls, served on threads of its own like the live view (gated_server.h):
//   /                     the page (self-contained)
//   /api/jobs             the queue and the workers as JSON (what `farm jobs --json` gives, and
//                         which job each worker serves)
//   /api/jobs/ID          one job as `farm job ID --json` gives it
//   /metrics              Prometheus text: jobs by state, workers, each unfinished job's progress
//   POST /api/jobs/ID/pause|resume|cancel, POST /api/jobs/ID/priority?value=N
//   /jobs/ID/...          a job's own live view (live_view_routes.h: the page, its status, its
//                         image and a thumbnail), while the job is set up and for the last
//                         k_ended_views jobs that ended since the service started
// The service's loop publishes the texts and takes the controls; a request never touches the
// queue itself. A control must come with the header "X-Farm-Control: 1" (a page of another site
// cannot send it without the browser asking first, which is never answered) and, when the
// server has a token, the token; its answer is the service's, as `farm pause` prints it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "live/live_server.h"
#include "live/live_view.h"

namespace farm {

// A control from the page, for the service's loop.
struct QueueControl {
  uint64_t ticket = 0;
  std::string verb;  // pause, resume, cancel, priority
  int64_t job = 0;
  std::string value;  // priority: the new one, as sent
};

class QueueServer {
 public:
  // Binds (throws std::runtime_error saying why it cannot) and starts serving.
  explicit QueueServer(const LiveServerOptions& o);
  ~QueueServer();
  QueueServer(const QueueServer&) = delete;
  QueueServer& operator=(const QueueServer&) = delete;

  int port() const { return m_port; }
  std::string url() const;

  // What GET answers from now on: the queue's JSON, each job's JSON by id, the metrics.
  void publish(std::string jobs_json, std::map<int64_t, std::string> job_json, std::string metrics);
  // The controls sent since the last call; each is answered with answer() (a request waits for
  // its answer a few seconds, then says the service did not answer).
  std::vector<QueueControl> take_controls();
  void answer(uint64_t ticket, bool ok, std::string body);

  // A job's live view, shown at /jobs/ID/ from now on; once the job has ended it stays shown
  // until k_ended_views later jobs have ended (each holds its image in memory).
  static constexpr size_t k_ended_views = 16;
  void show(int64_t job, std::shared_ptr<const LiveView> view);
  void ended(int64_t job);
  bool shows(int64_t job) const;

 private:
  struct Published {
    std::string jobs, metrics;
    std::map<int64_t, std::string> job;
  };
  std::shared_ptr<const Published> published() const;
  std::shared_ptr<const LiveView> view_of(int64_t job) const;
  // Queues the control and waits for its answer: HTTP status and body.
  std::pair<int, std::string> control(QueueControl c);

  LiveServerOptions m_o;
  std::vector<std::string> m_host_names;
  mutable std::mutex m_mutex;  // guards everything below
  std::shared_ptr<const Published> m_published;
  std::vector<QueueControl> m_controls;
  std::map<uint64_t, std::pair<bool, std::string>> m_answers;
  uint64_t m_next_ticket = 1;
  std::map<int64_t, std::shared_ptr<const LiveView>> m_views;
  std::vector<int64_t> m_ended;  // shown jobs that ended, oldest first
  std::condition_variable m_answered;
  std::unique_ptr<class GatedServer> m_server;  // destroyed before what its handlers read
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace farm
