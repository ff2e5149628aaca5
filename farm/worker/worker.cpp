#include "worker/worker.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <utility>

#include "base/memory.h"
#include "backend/renderer_process.h"
#include "job/build_id.h"
#include "security/endpoint_kind.h"
#include "security/launch_secrets.h"
#include "transport/endpoint_check.h"
#include "transport/flow.h"
#include "transport/sockets.h"
#include "worker/worker_state.h"

namespace farm {

namespace worker_detail {

Worker::Worker(const WorkerOptions& o, std::optional<security::CurveClient> curve, std::string fallback_key)
    : m_o(o),
      m_threads(o.threads > 0 ? o.threads : tbb::info::default_concurrency()),
      m_cache(o.cache_dir.empty() ? default_cache_dir() : o.cache_dir),
      m_link({k_max_reconnect_backoff, o.give_up_after, !o.fallback.empty() && !fallback_key.empty() && curve.has_value(),
              false},
             0) {
  m_connect = o.connect;
  if (!o.fallback.empty()) m_fallback_key = std::move(fallback_key);  // both, or no fallback
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  m_name = o.name.empty() ? std::string(host) + "-" + std::to_string(::getpid()) : o.name;
  m_event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  m_curve = std::move(curve);
}

Worker::~Worker() {
  m_pool.reset();  // joins render threads before anything they use goes away
  // Loaders write to the event fd when done: wait for them before closing it.
  if (m_loading.valid()) m_loading.wait();
  for (auto& f : m_abandoned) f.wait();
  if (m_event_fd >= 0) ::close(m_event_fd);
  std::error_code ec;
  for (const std::string& dir : m_job_dirs) std::filesystem::remove_all(dir, ec);
}

void Worker::connect() { m_socket = open_dealer_socket(m_ctx, m_connect, m_curve, &m_handshakes); }

void Worker::send(const proto::Message& m) {
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    (void)m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    spdlog::debug("send failed: {}", e.what());
  }
}

void Worker::hello() {
  proto::Hello h;
  if (m_o.protocol_version) h.protocol_version = m_o.protocol_version;
  h.build_id = farm_build_id();
  h.worker_name = m_name;
  h.threads = static_cast<uint32_t>(m_threads);
  h.cached_assets = m_cache.cached_hashes();
  if (h.cached_assets.size() > k_max_announced_assets) h.cached_assets.resize(k_max_announced_assets);
  send(h);
  m_link.said_hello(now());
}

RunStatus Worker::run() {
  // Before joining: a worker that cannot keep the scene would take work it cannot do.
  if (Status usable = m_cache.probe(); !usable.ok()) {
    spdlog::error("{} (the worker keeps the scene and its assets there: make room or pass another --cache)",
                  usable.message());
    return RunStatus::failure;
  }
  connect();
  hello();
  m_link.joined(now());
  for (;;) {
    if (m_o.stop && m_o.stop->load()) {
      // Renderer processes (a probe, blocks) end now: the render threads and the loader then
      // return, and their scratch folders go with them.
      kill_all_renderers();
      return RunStatus::ok;
    }
    const double interval = m_job.heartbeat_ms ? m_job.heartbeat_ms / 1000.0 : k_default_heartbeat_interval;
    const double liveness = m_job.liveness ? m_job.liveness : k_default_liveness;
    zmq::pollitem_t items[] = {{static_cast<void*>(*m_socket), 0, ZMQ_POLLIN, 0},
                               {nullptr, m_event_fd, ZMQ_POLLIN, 0},
                               {nullptr, STDIN_FILENO, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, m_o.launched ? 3 : 2, k_poll_slice);
    } catch (const zmq::error_t&) {
      continue;
    }
    if (m_o.launched && (items[2].revents & (ZMQ_POLLIN | ZMQ_POLLERR))) {
      char buf[256];
      const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        // No orphans: the master, its ssh channel or the Slurm step is gone.
        spdlog::error("the launcher's channel closed (the master is gone): stopping");
        return RunStatus::failure;
      }
    }
    if (std::string why = m_handshakes.poll(); !why.empty()) spdlog::warn("cannot join {}: {}", m_connect, why);
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t count;
      (void)::read(m_event_fd, &count, sizeof count);
      drain_results();
    }
    // Checked every turn: the loader's wake-up can arrive just before its future is ready.
    if (m_state == State::loading && m_loading.valid() &&
        m_loading.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      finish_loading();
    }
    for (int budget = 0; budget < k_upstream_receive_budget; ++budget) {
      zmq::message_t msg;
      if (!m_socket->recv(msg, zmq::recv_flags::dontwait)) break;
      proto::Decoded d = proto::decode(static_cast<const uint8_t*>(msg.data()), msg.size());
      if (!d.message) {
        if (d.refused_type == "Welcome") {
          refuse_welcome(d.error);
        } else {
          spdlog::warn("ignored a bad message from the master: {}", d.error);
        }
        continue;
      }
      if (std::optional<RunStatus> status = on_message(*d.message)) return *status;
      m_link.heard(now());
    }
    if (m_o.once && m_failed_job != 0) return RunStatus::failure;
    const double t = now();
    if (const std::optional<uint64_t> ping = m_link.ping_due(t, interval)) send(proto::Heartbeat{*ping, true});
    // A request the master could not serve is forgotten: ask again while we have room.
    if (m_state == State::working && t - m_last_request >= interval) request_work();
    // Files on their way hold up the master's heartbeats: wait for them (fetch_patience.h).
    const double patience = m_state == State::fetching ? m_fetch.patience() : 0.0;
    const LinkDecision link = m_link.check(t, interval, liveness, patience);
    if (link.silent) {
      // The master is gone (or not there yet): start over on a fresh socket, backing off.
      if (m_state != State::joining)
        spdlog::warn("{} silent for {:.1f} s; reconnecting", m_fallback_key.empty() ? "master" : "relay", link.silent_for);
      reset_job();
    }
    if (link.fall_back) {
      // The relay stayed silent through reconnects: the master has taken its leases back, and
      // this worker joins it directly, once and for good; the master has its key on its list.
      spdlog::warn("the relay at {} is silent: joining the master at {} instead", m_connect, m_o.fallback);
      m_connect = m_o.fallback;
      m_curve->server_key = std::exchange(m_fallback_key, std::string());
    }
    if (link.give_up) {
      spdlog::error("no master at {} for {:.0f} s; giving up", m_connect, link.unheard_for);
      return RunStatus::failure;
    }
    if (link.reconnect) {
      connect();
      hello();
    }
  }
}

}  // namespace worker_detail

RunStatus run_worker(const WorkerOptions& options) {
  std::optional<security::CurveClient> curve = options.curve;
  std::string fallback_key;
  if (options.launched) {
    try {
      security::WorkerLaunchSecrets secrets = security::read_launch_secrets(STDIN_FILENO);
      curve = std::move(secrets.keys);
      fallback_key = std::move(secrets.fallback_key);
    } catch (const std::exception& e) {
      spdlog::error("{}", error_text(e));
      return RunStatus::bad_input;
    }
  }
  // The CLI refuses a command line that would trust any master (cli/socket_keys.h); this
  // guards every other driver.
  if (!curve && !options.insecure && !security::is_loopback_endpoint(options.connect)) {
    spdlog::error("refusing to connect to {} without keys: it is not a loopback endpoint", options.connect);
    return RunStatus::bad_input;
  }
  try {
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                    options.threads > 0 ? options.threads : tbb::info::default_concurrency());
    if (!options.fallback.empty() && fallback_key.empty()) {
      spdlog::error("--fallback {}: the launch secrets name no fallback-public-key to pin", options.fallback);
      return RunStatus::bad_input;
    }
    if (std::string why = endpoint_problem(options.fallback, EndpointUse::connect);
        !options.fallback.empty() && !why.empty()) {
      spdlog::error("--fallback: {}", why);
      return RunStatus::bad_input;
    }
    return worker_detail::Worker(options, std::move(curve), std::move(fallback_key)).run();
  } catch (const std::exception& e) {
    spdlog::error("worker failed: {}", error_text(e));
    return RunStatus::failure;
  }
}

}  // namespace farm
