// The worker's state, shared by its loop (worker.cpp: connecting, heartbeats, the link to its
// master, run_worker) and its side of a job (worker_job.cpp: the welcome, assets, loading the
// scene, blocks and results). Internal to farm/worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "assets/asset_cache.h"
#include "assets/job_fetch.h"
#include "job/run_status.h"
#include "protocol/protocol.h"
#include "security/handshake_watch.h"
#include "security/socket_security.h"
#include "session/upstream_link.h"
#include "worker/job_loader.h"
#include "worker/render_pool.h"
#include "worker/worker.h"

namespace farm::worker_detail {

using Clock = std::chrono::steady_clock;

class Worker {
 public:
  // `curve`: CURVE keys for every (re)connect; empty = plaintext (loopback or --insecure).
  Worker(const WorkerOptions& o, std::optional<security::CurveClient> curve, std::string fallback_key);
  ~Worker();
  RunStatus run();

 private:
  enum class State { joining, fetching, loading, working };

  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  void connect();
  void send(const proto::Message& m);
  void hello();
  // Returns an exit code to stop with, or -1 to go on.
  std::optional<RunStatus> on_message(const proto::Message& m);
  void on_welcome(const proto::Welcome& w);
  void refuse_welcome(const std::string& why);
  void start_loading();
  void finish_loading();
  void fail_job(const std::string& why, proto::ErrorCode code);
  // Blocks to ask for: the render slots and the prefetch not yet filled (0 while not working).
  uint32_t wanted_blocks() const;
  void request_work();
  void drain_results();
  // The Result message for a block rendered here (pixels encoded and compressed as the job says).
  proto::Result result_of(RenderOutput& out) const;
  void reset_job();
  // The size the job's manifest gives for the asset `hash`.

  const WorkerOptions& m_o;
  Clock::time_point m_start = Clock::now();
  int m_threads;
  int m_render_slots = 1;  // blocks rendered at once: m_threads x LoadedJob::renders_per_thread
  AssetCache m_cache;
  std::string m_name;
  zmq::context_t m_ctx;
  std::optional<security::CurveClient> m_curve;
  std::string m_connect;       // where it joins: --connect, or --fallback once its relay went silent
  std::string m_fallback_key;  // the master's public key behind a relay ("" once used, or none)
  UpstreamLink m_link;         // heartbeats, silence, reconnects, the fallback, giving up
  std::unique_ptr<zmq::socket_t> m_socket;
  security::HandshakeWatch m_handshakes{m_ctx};  // says why joining fails (refused key, ...)
  int m_event_fd = -1;
  State m_state = State::joining;
  proto::Welcome m_job;
  JobFetch m_fetch;  // the job's files this worker's cache lacks, as they arrive
  std::future<std::unique_ptr<LoadedJob>> m_loading;
  // Loads abandoned by a reset: their futures would block in their destructors, so they are
  // kept here until the worker exits instead of stalling the I/O thread.
  std::vector<std::future<std::unique_ptr<LoadedJob>>> m_abandoned;
  uint64_t m_failed_job = 0;   // a job whose scene we could not load: do not rejoin it
  uint64_t m_load_generation = 0;
  std::vector<std::string> m_job_dirs;  // removed when the worker exits
  std::unique_ptr<LoadedJob> m_loaded;
  std::unique_ptr<RenderPool> m_pool;
  std::mutex m_done_mutex;
  std::deque<RenderOutput> m_done;
  size_t m_assigned = 0;       // blocks given to us and not yet finished
  double m_last_request = -1;
};

}  // namespace farm::worker_detail
