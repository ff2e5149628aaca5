#include "relay/relay.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <zmq.hpp>

#include "assets/asset_cache.h"
#include "base/limits.h"
#include "job/build_id.h"
#include "protocol/fetch_patience.h"
#include "protocol/protocol.h"
#include "protocol/sockets.h"
#include "relay/relay_queue.h"
#include "scheduler/block.h"
#include "security/endpoint_kind.h"
#include "security/handshake_watch.h"
#include "security/zap_handler.h"

namespace farm {

namespace {

using Clock = std::chrono::steady_clock;

// One of the site's workers, as the relay sees it.
struct SitePeer {
  WorkerId id = 0;
  std::string name;
  double last_heard = 0;
  int wanting = 0;                    // blocks it asked for and has not been given yet
  std::set<std::string> assets_sent;  // once per peer: a flood of requests must not fill memory
};

class Relay {
 public:
  explicit Relay(const RelayOptions& o);
  RunStatus run();

 private:
  enum class State { detached, joining, fetching, ready };

  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  double interval() const { return m_job.heartbeat_ms ? m_job.heartbeat_ms / 1000.0 : k_default_heartbeat_interval; }
  int liveness() const { return m_job.liveness ? static_cast<int>(m_job.liveness) : k_default_liveness; }

  // Upstream: this relay as a worker of its master.
  void join_upstream();
  // The Hello announces the site: its threads (--threads, or its workers' own) and its workers,
  // which the master's policy sizes the relay's leases by; sent again when they change.
  void send_hello();
  std::pair<int, int> site_size() const;
  void announce_if_changed();
  void send_up(const proto::Message& m);
  std::optional<RunStatus> on_upstream(const proto::Message& m);
  void on_welcome(const proto::Welcome& w);
  void on_asset(const proto::AssetData& a);
  void become_ready();
  void drop_job(const std::string& why);
  // Sends the request the handlers of this poll turn asked for (m_ask_due), once.
  void ask_upstream();

  // Downstream: this relay as the master of its site.
  bool send_site(const std::string& identity, const proto::Message& m);
  void on_site_frame(const std::string& identity, const uint8_t* data, size_t size);
  void on_site_hello(const std::string& identity, const proto::Hello& h);
  void welcome(const std::string& identity);
  void on_site_result(SitePeer& peer, proto::Result& r);
  void on_site_failed(SitePeer& peer, proto::BlockFailed& f);
  void on_site_assets(const std::string& identity, SitePeer& peer, const proto::AssetRequest& m);
  void serve(const std::string& identity, SitePeer& peer);
  void serve_all();
  void forget_silent_workers();
  const std::string* identity_of(WorkerId id) const;

  const RelayOptions& m_o;
  Clock::time_point m_start = Clock::now();
  std::string m_name;
  AssetCache m_cache;
  zmq::context_t m_ctx;
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<zmq::socket_t> m_site;
  std::unique_ptr<zmq::socket_t> m_up;
  security::HandshakeWatch m_handshakes{m_ctx};

  State m_state = State::detached;
  proto::Welcome m_job;
  std::set<std::string> m_missing;
  RelayQueue m_queue;
  std::map<std::string, SitePeer> m_peers;  // by ZeroMQ identity
  std::map<WorkerId, std::string> m_identity_of;
  WorkerId m_next_peer = 1;

  double m_last_up_heard = 0;
  double m_last_up_ping = -1;
  double m_last_hello = -1;
  double m_backoff = 1.0;
  uint64_t m_ping_sequence = 0;
  // A site worker asked for work in this job, so it has the scene loaded: only then does the
  // relay lease (a site that cannot load the scene must not hold the master's blocks).
  bool m_site_loaded = false;
  std::optional<RunStatus> m_fatal;  // set by a handler that must end the relay
  bool m_ask_due = false;       // ask the master once this poll turn, not once per message
  uint64_t m_bad_messages = 0;  // from site workers
  std::pair<int, int> m_announced{0, 0};  // site_size() as last said in a Hello
  std::map<AttemptId, double> m_leased_at;  // upstream id -> when the master's Assign arrived
  std::map<AttemptId, double> m_waited;     // upstream id -> how long it waited here before a worker took it
};

Relay::Relay(const RelayOptions& o) : m_o(o), m_cache(o.cache_dir.empty() ? default_cache_dir() : o.cache_dir) {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  m_name = o.name.empty() ? "relay-" + std::string(host) + "-" + std::to_string(::getpid()) : o.name;
}

// ---------------------------------------------------------------------------------- upstream

void Relay::join_upstream() {
  m_up = open_dealer_socket(m_ctx, m_o.connect, m_o.upstream_curve, &m_handshakes);
  send_hello();
  m_last_hello = now();
  m_last_up_heard = now();
  if (m_state == State::detached) m_state = State::joining;
}

std::pair<int, int> Relay::site_size() const {
  const int threads = std::clamp(m_o.threads > 0 ? m_o.threads : m_queue.site_threads(), 1, k_max_threads);
  const int workers = std::clamp(static_cast<int>(m_queue.workers().size()), 1, threads);
  return {threads, workers};
}

void Relay::send_hello() {
  proto::Hello h;
  h.build_id = farm_build_id();
  h.worker_name = m_name;
  m_announced = site_size();
  h.threads = static_cast<uint32_t>(m_announced.first);
  h.site_workers = static_cast<uint32_t>(m_announced.second);
  h.cached_assets = m_cache.cached_hashes();
  if (h.cached_assets.size() > 10000) h.cached_assets.resize(10000);
  send_up(h);
}

void Relay::announce_if_changed() {
  if (m_up && m_state != State::detached && site_size() != m_announced) send_hello();
}

void Relay::send_up(const proto::Message& m) {
  if (!m_up) return;
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    (void)m_up->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    spdlog::debug("relay: send upstream failed: {}", e.what());
  }
}

void Relay::on_welcome(const proto::Welcome& w) {
  if (w.protocol_version != proto::k_protocol_version) return;
  if (m_state == State::fetching || m_state == State::ready) {
    if (w.job_id == m_job.job_id) return;  // a repeated welcome
    drop_job("the master started another job");
  }
  m_job = w;
  m_missing.clear();
  for (const proto::AssetRef& a : w.assets)
    if (!m_cache.has(a.hash)) m_missing.insert(a.hash);
  spdlog::info("relay joined job {:x}: scene '{}', {} asset(s), {} to fetch for the site", w.job_id, w.scene_name,
               w.assets.size(), m_missing.size());
  if (m_missing.empty()) {
    become_ready();
  } else {
    m_state = State::fetching;
    send_up(proto::AssetRequest{{m_missing.begin(), m_missing.end()}});
  }
}

void Relay::on_asset(const proto::AssetData& a) {
  if (m_state != State::fetching || !m_missing.count(a.hash)) return;
  uint64_t size = 0;
  for (const proto::AssetRef& r : m_job.assets)
    if (r.hash == a.hash) size = r.size;
  if (Status valid = AssetCache::verify(a.hash, size, a.data); !valid.ok()) {
    spdlog::error("relay: bad asset from the master: {}", valid.message());
    m_fatal = RunStatus::failure;
    return;
  }
  if (Status stored = m_cache.store(a.hash, a.data); !stored.ok()) {
    spdlog::error("relay: cannot store an asset in the site's cache: {}; the partial file was removed: make room in "
                  "'{}' or give the relay another cache folder",
                  stored.message(), m_cache.root());
    m_fatal = RunStatus::failure;
    return;
  }
  m_missing.erase(a.hash);
  if (m_missing.empty()) become_ready();
}

void Relay::become_ready() {
  m_state = State::ready;
  for (const auto& [identity, peer] : m_peers) welcome(identity);
  m_ask_due = true;
}

// The job's leases are gone (the master is lost, or moved to another job): the site's workers
// drop what they hold of it, and the relay forgets it.
void Relay::drop_job(const std::string& why) {
  const std::vector<SiteAssignment> held = m_queue.clear_leases();
  if (!held.empty()) spdlog::warn("relay: {}: the site's {} block(s) in progress are cancelled", why, held.size());
  for (const SiteAssignment& a : held)
    if (const std::string* identity = identity_of(a.worker)) send_site(*identity, proto::Cancel{m_job.job_id, a.local});
  for (auto& [identity, peer] : m_peers) peer.wanting = 0;
  m_leased_at.clear();
  m_waited.clear();
  m_site_loaded = false;
  m_state = State::detached;
}

// Leases enough for what the site's workers can hold plus the spare; the master caps what one
// participant holds, so asking again before its answer arrives costs nothing.
void Relay::ask_upstream() {
  m_ask_due = false;
  if (m_state != State::ready || !m_site_loaded) return;
  const int want = m_queue.wanted(m_o.spare);
  if (want <= 0) return;
  send_up(proto::WorkRequest{static_cast<uint32_t>(want), static_cast<uint32_t>(m_queue.queued())});
}

std::optional<RunStatus> Relay::on_upstream(const proto::Message& message) {
  m_last_up_heard = now();
  m_backoff = 1.0;
  if (const auto* w = std::get_if<proto::Welcome>(&message)) {
    on_welcome(*w);
  } else if (const auto* a = std::get_if<proto::AssetData>(&message)) {
    on_asset(*a);
  } else if (const auto* assign = std::get_if<proto::Assign>(&message)) {
    if (m_state == State::ready && assign->job_id == m_job.job_id) {
      const Block& b = assign->rect;
      if (b.x < 0 || b.y < 0 || b.width < 1 || b.height < 1 || b.x + b.width > m_job.settings.width ||
          b.y + b.height > m_job.settings.height) {
        spdlog::warn("relay: ignored an assignment outside the job's image");
      } else {
        m_queue.leased(assign->attempt, b);
        m_leased_at.emplace(assign->attempt, now());
        serve_all();
      }
    }
  } else if (const auto* c = std::get_if<proto::Cancel>(&message)) {
    if (c->job_id == m_job.job_id) {
      m_leased_at.erase(c->attempt);
      m_waited.erase(c->attempt);
      if (std::optional<SiteAssignment> holder = m_queue.withdrawn(c->attempt))
        if (const std::string* identity = identity_of(holder->worker))
          send_site(*identity, proto::Cancel{m_job.job_id, holder->local});
      m_ask_due = true;  // room under the master's cap
    }
  } else if (const auto* r = std::get_if<proto::Recall>(&message)) {
    if (r->job_id == m_job.job_id && m_state == State::ready) {
      // Only what no site worker has started goes back; the master moves it to another site.
      proto::Released back{m_job.job_id, {}};
      for (AttemptId attempt : r->attempts) {
        if (!m_queue.recall(attempt)) continue;
        m_leased_at.erase(attempt);
        m_waited.erase(attempt);
        back.attempts.push_back(attempt);
      }
      spdlog::info("relay: the master recalled {} block(s); {} were not started and go back", r->attempts.size(),
                   back.attempts.size());
      send_up(back);  // answered even when empty: the master stops waiting for them
    }
  } else if (const auto* h = std::get_if<proto::Heartbeat>(&message)) {
    if (h->ping) send_up(proto::Heartbeat{h->sequence, false});
  } else if (const auto* d = std::get_if<proto::JobDone>(&message)) {
    if (d->job_id == m_job.job_id) {
      spdlog::info("relay: job {:x} is done", d->job_id);
      for (const auto& [identity, peer] : m_peers) send_site(identity, proto::JobDone{d->job_id});
      drop_job("the job is done");
      if (m_o.once) {
        m_site->set(zmq::sockopt::linger, 500);  // let JobDone reach the site before the socket closes
        return RunStatus::ok;
      }
      m_last_hello = -1;  // join the master's next job
    }
  } else if (const auto* e = std::get_if<proto::Error>(&message)) {
    if (e->code == proto::ErrorCode::incompatible) {
      spdlog::error("the master refused this relay: {}", e->message);
      return RunStatus::bad_input;
    }
    if (e->code == proto::ErrorCode::bad_message) {
      // The master does not know us (it restarted, or declared us dead): join again.
      drop_job("the master no longer knows this relay");
      m_last_hello = -1;
    }
  }
  return std::nullopt;
}

// -------------------------------------------------------------------------------- the site

bool Relay::send_site(const std::string& identity, const proto::Message& m) {
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    if (!m_site->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    return m_site->send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    spdlog::debug("relay: cannot send {} to a site worker: {}", proto::message_name(m), e.what());
    return false;
  }
}

const std::string* Relay::identity_of(WorkerId id) const {
  auto it = m_identity_of.find(id);
  return it == m_identity_of.end() ? nullptr : &it->second;
}

void Relay::welcome(const std::string& identity) {
  if (m_state != State::ready) return;  // welcomed once the site's copy of the job is complete
  send_site(identity, m_job);
}

void Relay::on_site_hello(const std::string& identity, const proto::Hello& h) {
  if (h.protocol_version != proto::k_protocol_version) {
    spdlog::warn("relay: refused worker '{}': protocol {} (this relay speaks {})", h.worker_name, h.protocol_version,
                 proto::k_protocol_version);
    send_site(identity, proto::Error{proto::ErrorCode::incompatible,
                                     "protocol version " + std::to_string(h.protocol_version) +
                                         " is not supported; the relay speaks " +
                                         std::to_string(proto::k_protocol_version)});
    return;
  }
  auto it = m_peers.find(identity);
  if (it == m_peers.end()) {
    SitePeer p;
    p.id = m_next_peer++;
    p.name = h.worker_name.empty() ? "worker-" + std::to_string(p.id) : h.worker_name;
    p.last_heard = now();
    it = m_peers.emplace(identity, p).first;
    m_identity_of[p.id] = identity;
    m_queue.worker_joined(p.id, static_cast<int>(std::min<uint32_t>(h.threads, k_max_threads)));
    spdlog::info("relay: site worker {} '{}' joined with {} thread(s)", p.id, p.name, h.threads);
  }
  // Enough of the site is there (or its size was given): join, announcing its threads.
  if (m_state == State::detached && !m_up && static_cast<int>(m_peers.size()) >= std::max(1, m_o.workers)) join_upstream();
  announce_if_changed();
  welcome(identity);
}

void Relay::on_site_assets(const std::string& identity, SitePeer& peer, const proto::AssetRequest& m) {
  for (const std::string& hash : m.hashes) {
    // Only the job's own files, by the hashes its manifest names: never a path a peer chose.
    bool known = false;
    for (const proto::AssetRef& a : m_job.assets) known |= a.hash == hash;
    if (!known || !m_cache.has(hash) || !peer.assets_sent.insert(hash).second) continue;
    if (std::optional<std::vector<uint8_t>> bytes = m_cache.read(hash)) {
      send_site(identity, proto::AssetData{hash, std::move(*bytes)});
    } else {
      spdlog::error("relay: cannot read asset {} from the site's cache '{}'", hash, m_cache.root());
    }
  }
}

void Relay::serve(const std::string& identity, SitePeer& peer) {
  if (m_state != State::ready || peer.wanting <= 0) return;
  for (const SiteAssignment& a : m_queue.request(peer.id, peer.wanting)) {
    if (!send_site(identity, proto::Assign{m_job.job_id, a.local, a.lease.block})) {
      m_queue.undeliverable(peer.id, a.local);  // back to the front of the queue
      break;
    }
    --peer.wanting;
    if (auto at = m_leased_at.find(a.lease.upstream); at != m_leased_at.end()) {
      m_waited[a.lease.upstream] += now() - at->second;  // a block given back and out again adds up
      at->second = now();
    }
  }
}

// Asking the master is the callers' business: only what frees its cap for this relay (a result,
// a cancel) or raises the site's want (a worker's request, a site change) is worth a message; an
// Assign arriving is not (asking again at once drew one empty answer per Assign).
void Relay::serve_all() {
  for (auto& [identity, peer] : m_peers) serve(identity, peer);
}

void Relay::on_site_result(SitePeer& peer, proto::Result& r) {
  std::optional<RelayLease> lease = m_queue.held_by(peer.id, r.attempt);
  if (r.job_id != m_job.job_id || !lease) return;  // cancelled meanwhile, or another job's: dropped here
  if (!(lease->block == r.rect)) {
    spdlog::warn("relay: site worker {} sent a result whose rectangle is not its block's; ignored", peer.id);
    return;
  }
  m_queue.finished(peer.id, r.attempt);
  r.attempt = lease->upstream;  // passed on unchanged otherwise: the master checks the pixels
  // The time the block waited here is queueing, not the link's: the master's link estimate and
  // waiting times must not see a slow link where the relay only held the block ahead.
  if (auto waited = m_waited.find(lease->upstream); waited != m_waited.end()) {
    r.queued_seconds += waited->second;
    m_waited.erase(waited);
  }
  send_up(r);
}

void Relay::on_site_failed(SitePeer& peer, proto::BlockFailed& f) {
  std::optional<RelayLease> lease = m_queue.held_by(peer.id, f.attempt);
  if (f.job_id != m_job.job_id || !lease || !(lease->block == f.rect)) return;
  m_queue.finished(peer.id, f.attempt);
  m_waited.erase(lease->upstream);
  f.attempt = lease->upstream;
  send_up(f);  // the master counts failures and decides where the block goes next
}

void Relay::on_site_frame(const std::string& identity, const uint8_t* data, size_t size) {
  proto::Decoded d = proto::decode(data, size);
  if (!d.message) {
    // The first few in full, then only now and then: a flood must not flood the log.
    if (++m_bad_messages <= 10 || m_bad_messages % 1000 == 0)
      spdlog::warn("relay: ignored a bad message from a site worker ({} so far): {}", m_bad_messages, d.error);
    return;
  }
  if (const auto* hello = std::get_if<proto::Hello>(&*d.message)) return on_site_hello(identity, *hello);
  auto it = m_peers.find(identity);
  if (it == m_peers.end()) {
    send_site(identity, proto::Error{proto::ErrorCode::bad_message, "not joined: send Hello"});
    return;
  }
  SitePeer& peer = it->second;
  peer.last_heard = now();
  if (auto* request = std::get_if<proto::WorkRequest>(&*d.message)) {
    peer.wanting = static_cast<int>(std::min<uint32_t>(request->credits, 1024));
    m_site_loaded = m_state == State::ready;
    serve(identity, peer);
    m_ask_due = true;
  } else if (auto* result = std::get_if<proto::Result>(&*d.message)) {
    on_site_result(peer, *result);
    serve(identity, peer);
    m_ask_due = true;
  } else if (auto* failed = std::get_if<proto::BlockFailed>(&*d.message)) {
    on_site_failed(peer, *failed);
    m_ask_due = true;
  } else if (const auto* assets = std::get_if<proto::AssetRequest>(&*d.message)) {
    on_site_assets(identity, peer, *assets);
  } else if (const auto* h = std::get_if<proto::Heartbeat>(&*d.message)) {
    if (h->ping) send_site(identity, proto::Heartbeat{h->sequence, false});
  } else if (const auto* e = std::get_if<proto::Error>(&*d.message)) {
    // A scene every worker would fail on ends the job at the master; a worker's own trouble is
    // its own (it is forgotten when it goes silent).
    spdlog::warn("relay: site worker {} '{}' reports: {}", peer.id, peer.name, e->message);
    if (e->code == proto::ErrorCode::scene_failed) send_up(*e);
  }
}

void Relay::forget_silent_workers() {
  const double limit = interval() * liveness();
  for (auto it = m_peers.begin(); it != m_peers.end();) {
    if (now() - it->second.last_heard <= limit) {
      ++it;
      continue;
    }
    spdlog::warn("relay: site worker {} '{}' is silent for {:.1f} s: its blocks go to the site's other workers",
                 it->second.id, it->second.name, limit);
    m_queue.worker_left(it->second.id);
    m_identity_of.erase(it->second.id);
    it = m_peers.erase(it);
  }
  announce_if_changed();
  serve_all();
  m_ask_due = true;  // the site's want changed
}

RunStatus Relay::run() {
  if (Status usable = m_cache.probe(); !usable.ok()) {
    spdlog::error("{} (the relay keeps the site's copy of the scene and its assets there)", usable.message());
    return RunStatus::failure;
  }
  if (m_o.site_curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, m_o.site_curve->allowed);
  try {
    m_site = open_router_socket(m_ctx, m_o.bind, m_o.site_curve, k_max_block_side);
  } catch (const zmq::error_t& e) {
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return RunStatus::failure;
  }
  const std::string endpoint = m_site->get(zmq::sockopt::last_endpoint);
  spdlog::info("relay listening on {} for the site's workers, joining {}", endpoint, m_o.connect);
  if (m_o.on_bound) m_o.on_bound(endpoint);
  if (m_o.threads > 0) join_upstream();
  double silent_since = now();
  double last_site_check = now();
  for (;;) {
    if (m_o.stop && m_o.stop->load()) return RunStatus::ok;
    std::vector<zmq::pollitem_t> items = {{static_cast<void*>(*m_site), 0, ZMQ_POLLIN, 0}};
    if (m_up) items.push_back({static_cast<void*>(*m_up), 0, ZMQ_POLLIN, 0});
    try {
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds(100));
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    if (std::string why = m_handshakes.poll(); !why.empty()) spdlog::warn("relay: cannot join {}: {}", m_o.connect, why);
    for (int budget = 0; m_up && budget < 1000; ++budget) {
      zmq::message_t msg;
      if (!m_up->recv(msg, zmq::recv_flags::dontwait)) break;
      proto::Decoded d = proto::decode(static_cast<const uint8_t*>(msg.data()), msg.size());
      if (!d.message) {
        spdlog::warn("relay: ignored a bad message from the master: {}", d.error);
        continue;
      }
      silent_since = now();
      if (std::optional<RunStatus> status = on_upstream(*d.message)) return *status;
      if (m_fatal) return *m_fatal;
    }
    for (int budget = 0; budget < 10000; ++budget) {
      zmq::message_t identity, payload;
      if (!m_site->recv(identity, zmq::recv_flags::dontwait)) break;
      if (!identity.more() || !m_site->recv(payload, zmq::recv_flags::dontwait)) continue;
      while (payload.more()) {  // extra frames are not part of the protocol
        zmq::message_t rest;
        if (!m_site->recv(rest, zmq::recv_flags::dontwait) || !rest.more()) break;
      }
      on_site_frame(std::string(static_cast<const char*>(identity.data()), identity.size()),
                    static_cast<const uint8_t*>(payload.data()), payload.size());
    }
    const double t = now();
    if (m_up && t - m_last_up_ping >= interval()) {
      send_up(proto::Heartbeat{++m_ping_sequence, true});
      m_last_up_ping = t;
      m_ask_due = true;  // a request the master could not serve is forgotten: ask again
    }
    if (m_ask_due) ask_upstream();
    if (t - last_site_check >= interval()) {
      forget_silent_workers();
      last_site_check = t;
    }
    // Files on their way hold up the master's heartbeats: wait for them (fetch_patience.h).
    const double patience = m_state == State::fetching ? proto::fetch_patience(m_job.assets, m_missing) : 0.0;
    if (m_up && t - m_last_up_heard > interval() * (liveness() + 1) + patience) {
      // The master is gone (or not there yet): start over on a fresh socket, backing off.
      if (m_state == State::fetching || m_state == State::ready) {
        spdlog::warn("relay: master silent for {:.1f} s; reconnecting", t - m_last_up_heard);
        drop_job("the master is silent");
        m_state = State::joining;
      }
      if (m_o.give_up_after > 0 && t - silent_since > m_o.give_up_after) {
        spdlog::error("no master at {} for {:.0f} s; giving up", m_o.connect, t - silent_since);
        return RunStatus::failure;
      }
      if (t - m_last_hello >= m_backoff) {
        join_upstream();
        m_backoff = std::min(32.0, m_backoff * 2);
        m_last_up_heard = t - interval() * liveness();  // one more period before the next attempt
      }
    } else if (m_up && m_last_hello < 0) {
      join_upstream();  // the next job, or a rejoin the master asked for
    }
  }
}

}  // namespace

RunStatus run_relay(const RelayOptions& options) {
  // The CLI decides keys first (cli/socket_keys.h); these guard every other driver.
  if (!options.upstream_curve && !options.insecure && !security::is_loopback_endpoint(options.connect)) {
    spdlog::error("refusing to connect to {} without keys: it is not a loopback endpoint", options.connect);
    return RunStatus::bad_input;
  }
  if (!options.site_curve && !options.insecure && !security::is_loopback_endpoint(options.bind)) {
    spdlog::error("refusing to serve {} without keys: it is reachable from the network", options.bind);
    return RunStatus::bad_input;
  }
  try {
    return Relay(options).run();
  } catch (const std::exception& e) {
    spdlog::error("relay failed: {}", e.what());
    return run_status_of(e);
  }
}

}  // namespace farm
