#include "relay/relay.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "base/memory.h"
#include "base/limits.h"
#include "job/build_id.h"
#include "transport/flow.h"
#include "transport/sockets.h"
#include "relay/relay_state.h"
#include "scheduler/block.h"
#include "security/endpoint_kind.h"

namespace farm {

namespace relay_detail {

Relay::Relay(const RelayOptions& o)
    : m_o(o),
      m_cache(o.cache_dir.empty() ? default_cache_dir() : o.cache_dir),
      m_link({k_max_reconnect_backoff, o.give_up_after, false}, 0) {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  m_name = o.name.empty() ? "relay-" + std::string(host) + "-" + std::to_string(::getpid()) : o.name;
}

// ---------------------------------------------------------------------------------- upstream

void Relay::join_upstream() {
  m_up = open_dealer_socket(m_ctx, m_o.connect, m_o.upstream_curve, &m_handshakes);
  send_hello();
  m_link.said_hello(now());
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
  if (h.cached_assets.size() > k_max_announced_assets) h.cached_assets.resize(k_max_announced_assets);
  send_up(h);
}

void Relay::announce_if_changed() {
  if (m_up && m_state != State::detached && site_size() != m_announced) send_hello();
}

bool Relay::send_up(const proto::Message& m) {
  if (!m_up) return false;
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    return m_up->send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
  } catch (const zmq::error_t& e) {
    spdlog::debug("relay: send upstream failed: {}", e.what());
    return false;
  }
}

bool Relay::give_back(const std::vector<AttemptId>& attempts) {
  // Sent first, forgotten after: leases the master never hears of must stay here.
  if (!send_up(proto::Released{m_job.job_id, attempts})) return false;
  for (AttemptId attempt : attempts) {
    m_queue.recall(attempt);
    m_leased_at.erase(attempt);
    m_waited.erase(attempt);
  }
  return true;
}

void Relay::on_welcome(const proto::Welcome& w) {
  if (w.protocol_version != proto::k_protocol_version) return;
  if (m_state == State::fetching || m_state == State::ready) {
    if (w.job_id == m_job.job_id) return;  // a repeated welcome
    drop_job("the master started another job");
  }
  m_job = w;
  m_fetch = JobFetch(m_cache, w.assets, "relay: ");
  spdlog::info("relay joined job {:x}: scene '{}', {} asset(s), {} to fetch for the site", w.job_id, w.scene_name,
               w.assets.size(), m_fetch.missing().size());
  if (m_fetch.complete()) {
    become_ready();
  } else {
    m_state = State::fetching;
    send_up(m_fetch.request());
  }
}

void Relay::on_asset(const proto::AssetData& a) {
  if (m_state != State::fetching) return;
  Status error;
  switch (m_fetch.receive(a, error)) {
    case JobFetch::Outcome::ignored: return;
    case JobFetch::Outcome::bad_asset:
      spdlog::error("relay: bad asset from the master: {}", error.message());
      m_fatal = RunStatus::failure;
      return;
    case JobFetch::Outcome::cannot_store:
      spdlog::error("relay: cannot store an asset in the site's cache: {}; the partial file was removed: make room in "
                    "'{}' or give the relay another cache folder",
                    error.message(), m_cache.root());
      m_fatal = RunStatus::failure;
      return;
    case JobFetch::Outcome::stored:
      if (m_fetch.complete()) become_ready();
      return;
  }
}

void Relay::become_ready() {
  m_state = State::ready;
  for (const auto& [identity, peer] : m_endpoint->peers()) welcome(identity);
  m_ask_due = true;
}

// The job's leases are gone (the master is lost, or moved to another job): the site's workers
// drop what they hold of it, and the relay forgets it.
void Relay::drop_job(const std::string& why) {
  const std::vector<SiteAssignment> held = m_queue.clear_leases();
  if (!held.empty()) spdlog::warn("relay: {}: the site's {} block(s) in progress are cancelled", why, held.size());
  for (const SiteAssignment& a : held)
    m_endpoint->send(a.worker, proto::Cancel{m_job.job_id, a.local});
  m_wanting.clear();
  for (auto& [identity, peer] : m_endpoint->peers()) {
    if (m_failures.benched(peer.id)) m_queue.worker_joined(peer.id, peer.threads);  // benched for one job only
  }
  m_failures.clear();
  m_leased_at.clear();
  m_waited.clear();
  m_results_up.clear();  // for leases the master has given up on, or of a job that is over
  m_said_sitting_out = false;
  m_site_loaded = false;
  m_state = State::detached;
}

// Leases enough for what the site's workers can hold plus the spare (at least --spare, and what
// covers the round trip at the site's pace: relay_spare); the master caps what one participant
// holds, so asking again before its answer arrives costs nothing.
std::optional<proto::WorkRequest> Relay::upstream_ask() const {
  if (m_state != State::ready || !m_site_loaded) return std::nullopt;
  const int want = m_queue.wanted(relay_spare(m_o.spare, m_up_rtt, m_block_seconds, m_queue.site_threads()));
  if (want <= 0) return std::nullopt;
  return proto::WorkRequest{static_cast<uint32_t>(want), static_cast<uint32_t>(m_queue.queued())};
}

// A site of 100 sends results in bursts: the request rides on the last of them, so a busy relay
// costs the master one message per block, as a worker does, instead of two.
void Relay::flush_upstream() {
  std::optional<proto::WorkRequest> ask;
  if (m_ask_due) ask = upstream_ask();
  m_ask_due = false;
  if (!m_results_up.empty() && ask) {
    m_results_up.back().next_credits = ask->credits;
    m_results_up.back().next_queued = ask->queued;
    ask.reset();
  }
  for (const proto::Result& r : m_results_up) send_up(r);
  m_results_up.clear();
  if (ask) send_up(*ask);
}

std::optional<RunStatus> Relay::on_upstream(const proto::Message& message) {
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
      for (const SiteAssignment& holder : m_queue.withdrawn(c->attempt))
        m_endpoint->send(holder.worker, proto::Cancel{m_job.job_id, holder.local});
      m_ask_due = true;  // room under the master's cap
    }
  } else if (const auto* r = std::get_if<proto::Recall>(&message)) {
    if (r->job_id == m_job.job_id && m_state == State::ready) {
      // Only what no site worker has been given goes back (those named, or other queued ones as
      // many); the master moves them to another site. Answered even when empty: the master
      // stops waiting for them.
      const std::vector<AttemptId> back = m_queue.recallable(r->attempts);
      const bool sent = give_back(back);
      spdlog::info("relay: the master recalled {} block(s); {} were not handed out{}", r->attempts.size(), back.size(),
                   sent ? " and go back" : ", but the answer could not be sent: they stay");
    }
  } else if (const auto* h = std::get_if<proto::Heartbeat>(&message)) {
    if (h->ping) {
      send_up(proto::Heartbeat{h->sequence, false});
    } else if (const std::optional<double> rtt = m_link.pong(h->sequence, now())) {  // answers our last ping
      m_up_rtt = smoothed_seconds(m_up_rtt, *rtt);
    }
  } else if (const auto* d = std::get_if<proto::JobDone>(&message)) {
    if (d->job_id == m_job.job_id) {
      spdlog::info("relay: job {:x} is done", d->job_id);
      for (const auto& [identity, peer] : m_endpoint->peers()) send_site(identity, proto::JobDone{d->job_id});
      drop_job("the job is done");
      if (m_o.once) {
        m_endpoint->socket().set(zmq::sockopt::linger, k_final_linger_ms);  // let JobDone reach the site before the socket closes
        return RunStatus::ok;
      }
      m_link.rejoin_now();  // join the master's next job
    }
  } else if (const auto* e = std::get_if<proto::Error>(&message)) {
    if (e->code == proto::ErrorCode::incompatible) {
      spdlog::error("the master refused this relay: {}", e->message);
      return RunStatus::bad_input;
    }
    if (e->code == proto::ErrorCode::bad_message) {
      // The master does not know us (it restarted, or declared us dead): join again.
      drop_job("the master no longer knows this relay");
      m_link.rejoin_now();
    }
  }
  return std::nullopt;
}

bool Relay::lifeline_ended() {
  char buf[256];
  const ssize_t n = ::read(m_o.lifeline_fd, buf, sizeof buf);
  return n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
}

RunStatus Relay::run() {
  if (Status usable = m_cache.probe(); !usable.ok()) {
    spdlog::error("{} (the relay keeps the site's copy of the scene and its assets there)", usable.message());
    return RunStatus::failure;
  }
  if (m_o.site_curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, m_o.site_curve->allowed);
  try {
    m_endpoint = std::make_unique<ServingEndpoint>(open_router_socket(m_ctx, m_o.bind, m_o.site_curve, k_max_block_side),
                                                   static_cast<ServingHandler&>(*this), "the relay", "relay: ");
  } catch (const zmq::error_t& e) {
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return RunStatus::failure;
  }
  const std::string endpoint = m_endpoint->socket().get(zmq::sockopt::last_endpoint);
  spdlog::info("relay listening on {} for the site's workers, joining {}", endpoint, m_o.connect);
  if (m_o.on_bound) m_o.on_bound(endpoint);
  if (m_o.threads > 0) {
    join_upstream();
    m_link.joined(now());
  }
  double last_site_check = now();
  for (;;) {
    if (m_o.stop && m_o.stop->load()) return RunStatus::ok;
    std::vector<zmq::pollitem_t> items = {{static_cast<void*>(m_endpoint->socket()), 0, ZMQ_POLLIN, 0}};
    if (m_o.lifeline_fd >= 0) items.push_back({nullptr, m_o.lifeline_fd, ZMQ_POLLIN, 0});
    if (m_up) items.push_back({static_cast<void*>(*m_up), 0, ZMQ_POLLIN, 0});
    try {
      zmq::poll(items.data(), items.size(), k_poll_slice);
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    if (m_o.lifeline_fd >= 0 && (items[1].revents & (ZMQ_POLLIN | ZMQ_POLLERR)) && lifeline_ended()) {
      // No orphans: the master, its ssh channel or the launcher is gone.
      spdlog::error("the launcher's channel closed (the master is gone): stopping");
      return RunStatus::failure;
    }
    if (std::string why = m_handshakes.poll(); !why.empty()) spdlog::warn("relay: cannot join {}: {}", m_o.connect, why);
    for (int budget = 0; m_up && budget < k_upstream_receive_budget; ++budget) {
      zmq::message_t msg;
      if (!m_up->recv(msg, zmq::recv_flags::dontwait)) break;
      proto::Decoded d = proto::decode(static_cast<const uint8_t*>(msg.data()), msg.size());
      if (!d.message) {
        if (d.refused_type == "Welcome") {
          // As a worker does: the master learns why, instead of waiting for this site forever.
          spdlog::error("relay: cannot take the master's job: {}", d.error);
          send_up(proto::Error{proto::ErrorCode::bad_message,
                               ("relay '" + m_name + "' cannot take the job as sent: " + d.error).substr(0, 1000)});
        } else {
          spdlog::warn("relay: ignored a bad message from the master: {}", d.error);
        }
        continue;
      }
      if (std::optional<RunStatus> status = on_upstream(*d.message)) return *status;
      if (m_fatal) return *m_fatal;
      m_link.heard(now());
    }
    m_endpoint->receive(now());
    if (m_site_changed) {
      m_site_changed = false;
      site_changed();
    }
    const double t = now();
    if (m_up) {
      if (const std::optional<uint64_t> ping = m_link.ping_due(t, interval())) {
        send_up(proto::Heartbeat{*ping, true});
        m_ask_due = true;  // a request the master could not serve is forgotten: ask again
      }
    }
    flush_upstream();
    if (t - last_site_check >= interval()) {
      forget_silent_workers();
      last_site_check = t;
    }
    // Files on their way hold up the master's heartbeats: wait for them (fetch_patience.h).
    const double patience = m_state == State::fetching ? m_fetch.patience() : 0.0;
    if (m_up) {
      const LinkDecision link = m_link.check(t, interval(), liveness(), patience);
      if (link.silent && (m_state == State::fetching || m_state == State::ready)) {
        // The master is gone (or not there yet): start over on a fresh socket, backing off.
        spdlog::warn("relay: master silent for {:.1f} s; reconnecting", link.silent_for);
        drop_job("the master is silent");
        m_state = State::joining;
      }
      if (link.give_up) {
        spdlog::error("no master at {} for {:.0f} s; giving up", m_o.connect, link.unheard_for);
        return RunStatus::failure;
      }
      if (link.reconnect) join_upstream();  // after silence, or the next job, or a rejoin asked for
    }
    if (!m_up && m_link.give_up_due(t)) {
      // It joins its master once its site workers are there (relay_site.cpp): until then it
      // is without one as surely as when the master is silent (docs/relays.md, Failures).
      const size_t joined = m_endpoint->peers().size();
      const std::string reached = joined == 0 ? std::string("no site worker")
                                              : std::to_string(joined) + " of the " +
                                                        std::to_string(std::max(1, m_o.workers)) + " site workers it waits for";
      spdlog::error("{} reached this relay at {} in {:.0f} s, so it never joined its master at {}; giving up", reached,
                    endpoint, m_link.unheard_for(t), m_o.connect);
      return RunStatus::failure;
    }
  }
}

}  // namespace relay_detail

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
    return relay_detail::Relay(options).run();
  } catch (const std::exception& e) {
    spdlog::error("relay failed: {}", error_text(e));
    return run_status_of(e);
  }
}

}  // namespace farm
