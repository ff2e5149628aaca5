// The farm service's web page (`farm serve --http ADDR:PORT`, docs/service.md): the queue with
// its controls, served on threads of its own like the live view (gated_server.h):
//   /                     the page (self-contained)
//   /api/jobs             the queue and the workers as JSON (what `farm jobs --json` gives, and
//                         which job each worker serves)
//   /api/jobs/ID          one job as `farm job ID --json` gives it
//   /metrics              Prometheus text: jobs by state, workers, each unfinished job's progress
//   POST /api/jobs/ID/pause|resume|cancel, POST /api/jobs/ID/priority?value=N
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

 private:
  struct Published {
    std::string jobs, metrics;
    std::map<int64_t, std::string> job;
  };
  std::shared_ptr<const Published> published() const;
  // Queues the control and waits for its answer: HTTP status and body.
  std::pair<int, std::string> control(QueueControl c);

  LiveServerOptions m_o;
  std::vector<std::string> m_host_names;
  mutable std::mutex m_mutex;  // guards everything below
  std::shared_ptr<const Published> m_published;
  std::vector<QueueControl> m_controls;
  std::map<uint64_t, std::pair<bool, std::string>> m_answers;
  uint64_t m_next_ticket = 1;
  std::condition_variable m_answered;
  std::unique_ptr<class GatedServer> m_server;  // destroyed before what its handlers read
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace farm
