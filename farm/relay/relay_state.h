// The relay process's state and handlers (relay/relay.h): relay.cpp holds its run loop and its
// upstream side (the relay as a worker of its master), relay_site.cpp its site side (the relay as
// the master of the site's workers). Private to farm/relay.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <zmq.hpp>

#include "assets/asset_cache.h"
#include "assets/job_fetch.h"
#include "control/renderer_failures.h"
#include "protocol/protocol.h"
#include "relay/relay.h"
#include "control/relay_queue.h"
#include "security/handshake_watch.h"
#include "security/zap_handler.h"
#include "serving/serving_endpoint.h"
#include "session/upstream_link.h"

namespace farm::relay_detail {

using Clock = std::chrono::steady_clock;

// The relay serves its site through a ServingEndpoint and decides, as its handler, what each
// site worker's message means; upstream it is a worker of its master.
class Relay : private ServingHandler {
 public:
  explicit Relay(const RelayOptions& o);
  RunStatus run();

 private:
  enum class State { detached, joining, fetching, ready };

  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  double interval() const { return m_job.heartbeat_ms ? m_job.heartbeat_ms / 1000.0 : k_default_heartbeat_interval; }
  int liveness() const { return m_job.liveness ? static_cast<int>(m_job.liveness) : k_default_liveness; }

  // Read what came on the lifeline (nothing is expected after the keys): true at its end.
  bool lifeline_ended();

  // Upstream: this relay as a worker of its master.
  void join_upstream();
  // The Hello announces the site: its threads (--threads, or its workers' own) and its workers,
  // which the master's policy sizes the relay's leases by; sent again when they change.
  void send_hello();
  std::pair<int, int> site_size() const;
  void announce_if_changed();
  bool send_up(const proto::Message& m);
  // Released for `attempts` (queued here): true, and they are forgotten, once it is sent.
  bool give_back(const std::vector<AttemptId>& attempts);
  // Nobody at the site can render (every worker gone or benched): the queued leases go back to
  // the master, and a site whose every worker is benched says it sits the job out.
  void check_site_left();
  std::optional<RunStatus> on_upstream(const proto::Message& m);
  void on_welcome(const proto::Welcome& w);
  void on_asset(const proto::AssetData& a);
  void become_ready();
  void drop_job(const std::string& why);
  // Sends what this poll turn's handlers left for the master: the site's results, and the request
  // they asked for (m_ask_due) once, riding on the last result when there is one.
  void flush_upstream();
  // The request to send now, if the site wants more than it holds.
  std::optional<proto::WorkRequest> upstream_ask() const;

  // Downstream: this relay as the master of its site (ServingHandler).
  bool send_site(const std::string& identity, const proto::Message& m) { return m_endpoint->send(identity, m); }
  void on_hello(ServedPeer& peer, bool joined, const ServedPeer& before) override;
  void on_message(ServedPeer& peer, proto::Message& message) override;
  void on_quarantined(ServedPeer& peer) override;
  void welcome(const std::string& identity);
  void on_site_result(ServedPeer& peer, proto::Result& r);
  void on_site_failed(ServedPeer& peer, proto::BlockFailed& f);
  void on_site_assets(ServedPeer& peer, const proto::AssetRequest& m);
  // A site worker asked for `credits` blocks (a request, or one riding on a result).
  void wants(ServedPeer& peer, uint32_t credits);
  void serve(ServedPeer& peer);
  void serve_all();
  void forget_silent_workers();
  // The relay's side of a site worker that is gone (silent, or quarantined): its blocks go to the
  // site's other workers. The endpoint forgets it.
  void site_worker_left(const ServedPeer& peer);
  // After a site worker left: the site's size, its queue and the master hear of it.
  void site_changed();
  // How long a site worker holds a block before an idle one may render a copy (RelayCopyGate).
  double copy_after() {
    m_copy_gate.note(m_queue.queued(), now());
    return m_copy_gate.copy_after(now(), m_up_rtt, m_block_seconds);
  }

  const RelayOptions& m_o;
  Clock::time_point m_start = Clock::now();
  std::string m_name;
  AssetCache m_cache;
  zmq::context_t m_ctx;
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<ServingEndpoint> m_endpoint;  // the site's workers, by routing identity
  std::unique_ptr<zmq::socket_t> m_up;
  security::HandshakeWatch m_handshakes{m_ctx};

  State m_state = State::detached;
  proto::Welcome m_job;
  JobFetch m_fetch;  // the job's files the site's cache lacks, as they arrive
  RelayQueue m_queue;
  std::map<WorkerId, int> m_wanting;  // blocks each site worker asked for and has not been given yet
  UpstreamLink m_link;  // heartbeats, silence, reconnects, giving up (as a worker's)
  // A site worker asked for work in this job, so it has the scene loaded: only then does the
  // relay lease (a site that cannot load the scene must not hold the master's blocks).
  bool m_site_loaded = false;
  std::optional<RunStatus> m_fatal;  // set by a handler that must end the relay
  bool m_site_changed = false;  // a site worker was quarantined: site_changed() is due
  bool m_ask_due = false;       // ask the master once this poll turn, not once per message
  std::vector<proto::Result> m_results_up;  // the site's results of this poll turn, to forward
  std::pair<int, int> m_announced{0, 0};  // site_size() as last said in a Hello
  double m_block_seconds = 0;  // smoothed render seconds per block of the site's results
  RelayCopyGate m_copy_gate;  // site copies only once the master looks dry for us
  double m_up_rtt = 0;         // smoothed round trip to the master, from its answers to our pings
  bool m_said_sitting_out = false;  // told the master this job's site is all benched
  RendererFailures m_failures;      // its site workers' failures in a row, and who is benched
  std::map<AttemptId, double> m_leased_at;  // upstream id -> when the master's Assign arrived
  std::map<AttemptId, double> m_waited;     // upstream id -> how long it waited here before a worker took it
};

}  // namespace farm::relay_detail
