// `farm master`: one job served on one endpoint until it is done. The endpoint (its socket,
// peers, quarantine) is the serving layer's; the job (scene, scheduler, journal, images, what
// each message means) is a ServedJob; this file is what joins them for a one-shot run: bind,
// loop, heartbeats, the peers that leave, the end.
#include "master/master.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <zmq.hpp>

#include "base/json_text.h"
#include "base/memory.h"
#include "master/served_job.h"
#include "security/endpoint_kind.h"
#include "security/zap_handler.h"
#include "serving/serving_endpoint.h"
#include "transport/endpoint_check.h"
#include "transport/flow.h"
#include "transport/sockets.h"

namespace farm {
namespace {

// The host of one job: every peer that joins is the job's.
class Master : private ServingHandler, private JobHost {
 public:
  explicit Master(const MasterOptions& o) : m_o(o), m_job(o, *this) {}
  RunStatus run();

 private:
  double now() const { return m_job.now(); }
  RunStatus open_socket(const std::optional<security::CurveServer>& curve);
  // ServingHandler: every peer is the job's.
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) override {
    m_job.on_hello(peer, joined, before);
    if (joined && m_o.on_worker_change) m_o.on_worker_change(peer.name, true);
  }
  void on_heard(ServedPeer& peer, double t) override { m_job.heard(peer.id, t); }
  void on_message(ServedPeer& peer, proto::Message& message) override { m_job.on_message(peer, message); }
  void on_quarantined(ServedPeer& peer) override { m_job.on_quarantined(peer); }
  void on_round_trip(ServedPeer& peer, double seconds) override { m_job.round_trip(peer.id, seconds); }
  void on_sent(const ServedPeer& peer, size_t bytes) override { m_job.bytes_out(peer.id, bytes); }
  bool stop_reading() override { return m_job.done(); }
  // JobHost: the peer is gone (declared dead, failed, quarantined): no more messages to it.
  void drop(WorkerId worker) override;
  // Why the job must stop now ("" to go on): the job's own reasons, Ctrl-C, the caller, or no
  // worker for too long.
  std::string abort_reason(bool& bad_scene);
  RunStatus finish();

  const MasterOptions& m_o;
  zmq::context_t m_ctx;
  // Declared between the context and the socket: it must outlive the socket it guards (fail closed).
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<ServingEndpoint> m_endpoint;  // its workers and relays, by routing identity
  ServedJob m_job;
  double m_last_heartbeat = -1;
  double m_alone_since = 0;  // since when no worker is live (--give-up-after)
};

void Master::drop(WorkerId worker) {
  const ServedPeer* peer = m_endpoint->find(worker);
  if (!peer) return;
  if (m_o.on_worker_change) m_o.on_worker_change(peer->name, false);
  m_job.forget(worker);
  m_endpoint->forget(worker);
}

RunStatus Master::open_socket(const std::optional<security::CurveServer>& curve) {
  // The ZAP handler is bound before the socket, so no handshake can come before it.
  if (std::string why = endpoint_problem(m_o.bind, EndpointUse::bind); !why.empty()) {
    spdlog::error("the endpoint to bind: {}", why);  // a driver other than the CLI (whose check says the same)
    return RunStatus::bad_input;
  }
  if (curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, curve->allowed);
  try {
    m_endpoint = std::make_unique<ServingEndpoint>(open_router_socket(m_ctx, m_o.bind, curve, m_job.config().block_size),
                                                   static_cast<ServingHandler&>(*this), "master");
  } catch (const zmq::error_t& e) {
    // The OS refused (address in use, not this machine's): a failure, not a bad command line.
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return RunStatus::failure;
  }
  return RunStatus::ok;
}

std::string Master::abort_reason(bool& bad_scene) {
  if (std::string why = m_job.abort_reason(m_endpoint->peers().size(), bad_scene); !why.empty()) return why;
  if (m_o.stop && m_o.stop->load()) return "interrupted";
  if (m_o.should_abort)
    if (std::string why = m_o.should_abort(); !why.empty()) return why;
  const double t = now();
  if (m_job.scheduler().live_workers() > 0) {
    m_alone_since = t;
  } else if (m_o.give_up_after > 0 && t - m_alone_since >= m_o.give_up_after) {
    return fmt::format("no worker for {:g} s (--give-up-after)", m_o.give_up_after);
  }
  return "";
}

RunStatus Master::run() {
  // Keys first: the CLI refuses a command line that would expose the master before any work
  // (cli/socket_keys.h); this guards every other driver.
  if (!m_o.curve && !m_o.insecure && !security::is_loopback_endpoint(m_o.bind)) {
    spdlog::error("refusing to serve {} without keys: it is reachable from the network", m_o.bind);
    return RunStatus::bad_input;
  }
  // The first step that fails ends the job: bad input (exit 2) or a failure (exit 1).
  RunStatus started = m_job.setup();
  if (started == RunStatus::ok) started = open_socket(m_o.curve);
  if (started == RunStatus::ok) started = m_job.start_live_view();
  if (started == RunStatus::ok) started = m_job.open(*m_endpoint);
  if (started != RunStatus::ok) return started;
  struct Linger {  // on every way out once the live view runs
    ServedJob& job;
    ~Linger() { job.linger_live_view(); }
  } linger{m_job};
  const Scheduler& scheduler = m_job.scheduler();
  std::string endpoint = m_endpoint->socket().get(zmq::sockopt::last_endpoint);
  const rt::RenderSettings& s = m_job.render_settings();
  spdlog::info("master listening on {} ({}x{}, {} frame(s), {} blocks of {}, policy {})", endpoint, s.width, s.height,
               m_job.frame_count(), scheduler.pending_blocks(), scheduler.config().block_size, scheduler.policy().name());
  if (m_o.on_bound) m_o.on_bound(endpoint);

  while (!scheduler.done()) {
    bool bad_scene = false;
    if (std::string why = abort_reason(bad_scene); !why.empty()) {
      m_job.failed(why);
      return bad_scene ? RunStatus::bad_input : RunStatus::failure;
    }
    const double t = now();
    const double interval = m_o.scheduling.heartbeat_interval;
    if (t - m_last_heartbeat >= interval) {
      m_endpoint->ping_all(t);
      m_last_heartbeat = t;
    }
    double next = std::min(scheduler.next_deadline(), m_last_heartbeat + interval);
    long timeout_ms = static_cast<long>(std::clamp((next - t) * 1000.0, 0.0, static_cast<double>(k_poll_slice.count())));
    zmq::pollitem_t items[] = {{static_cast<void*>(m_endpoint->socket()), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(timeout_ms));
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    m_endpoint->receive(now());  // drains everything waiting (within a budget) before ticking again
    for (WorkerId id : m_job.tick(now())) {
      spdlog::warn("worker {} is silent for {:.1f} s: declared dead, its blocks go back to the pool", id,
                   interval * m_o.scheduling.liveness);
      drop(id);
    }
    m_job.turn();
  }
  return finish();
}

RunStatus Master::finish() {
  const ServingEndpoint& e = *m_endpoint;
  const RunStatus status = m_job.finish([&] {
    return std::vector<std::string>{
        json_field("bad_messages", e.quarantine().bad_messages()), json_raw_field("quarantined_peers", e.quarantine().json()),
        json_field("dropped_frames", e.quarantine().dropped_frames()), json_field("messages_in", e.messages_in()),
        json_field("messages_out", e.messages_out())};
  });
  // Let JobDone leave before the socket closes (LINGER 0 would discard it).
  m_endpoint->socket().set(zmq::sockopt::linger, k_final_linger_ms);
  const Scheduler& s = m_job.scheduler();
  spdlog::info("done in {:.3f} s: {} blocks, {} reassigned, {} late results dropped, {} bad messages ignored", m_job.makespan(),
               s.completed_blocks(), s.reassignments(), s.late_results(), e.quarantine().bad_messages());
  if (e.quarantine().size()) {
    spdlog::info("{} peer(s) quarantined, {} of their frames dropped unread", e.quarantine().size(),
                 e.quarantine().dropped_frames());
  }
  return status;
}

}  // namespace

RunStatus run_master(const MasterOptions& options) {
  try {
    return Master(options).run();
  } catch (const std::exception& e) {
    spdlog::error("master failed: {}", error_text(e));
    return RunStatus::failure;
  }
}

}  // namespace farm
