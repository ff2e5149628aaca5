// The sites model (simulation_state.h, docs/relays.md "Simulated: many sites"): a site's relay on
// the real relay's bookkeeping (SimRelay), between its workers' LAN and its WAN link, and the
// master's side of a relay (a participant as a worker is, plus seed 002's supervisor).
#include "sim/simulation_state.h"

namespace farm::sim_detail {

void Simulation::relay_send_up(uint32_t site, Message m, double bytes) {
  m.worker = relay_peer(site);
  Event e;
  e.t = m_sites[site].up.deliver(m_now, bytes, m_rng);
  e.kind = Ev::master_arrive;
  e.m = std::move(m);
  push(std::move(e));
}

// To a site worker over its LAN link.
void Simulation::relay_send_down(uint32_t worker, Message m) {
  m.worker = worker;
  Event e;
  e.t = m_workers[worker].down.deliver(m_now, k_small_message, m_rng);
  e.kind = Ev::worker_arrive;
  e.m = std::move(m);
  push(std::move(e));
}

// Assigns under the relay's local ids.
void Simulation::relay_deliver(const std::vector<SiteAssignment>& assigned) {
  for (const SiteAssignment& a : assigned) {
    Message out = message(Msg::assign);
    out.attempt = a.local;
    out.block = a.lease.block;
    relay_send_down(a.worker - 1, out);
  }
}

// The real relay's ask rule: after whatever changed its want or freed room under the master's
// cap (a worker's request, result or departure, a cancel) and once per heartbeat interval, at
// most once per poll turn.
void Simulation::relay_ask(uint32_t site) {
  if (m_sites[site].ask_due) return;
  m_sites[site].ask_due = true;
  push(m_now + k_relay_poll_turn, Ev::relay_ask, site);
}

void Simulation::relay_ask_now(uint32_t site) {
  SimSite& s = m_sites[site];
  s.ask_due = false;
  std::optional<RelayAsk> ask = s.relay.ask();
  // As the real relay (flush_upstream): the turn's results, the ask riding on the last.
  if (!s.results_up.empty() && ask) {
    s.results_up.back().credits = static_cast<uint32_t>(ask->credits);
    s.results_up.back().unstarted = static_cast<uint32_t>(ask->queued);
    ask.reset();
  }
  for (Message& r : s.results_up) {
    const double bytes = k_result_header + static_cast<double>(r.bytes);
    relay_send_up(site, std::move(r), bytes);
  }
  s.results_up.clear();
  if (!ask) return;
  Message m = message(Msg::request);
  m.credits = static_cast<uint32_t>(ask->credits);
  m.unstarted = static_cast<uint32_t>(ask->queued);
  relay_send_up(site, m);
}

// A relay's hello: first for the site as configured, then again when it grew or shrank.
void Simulation::relay_announce(uint32_t site, int threads, int members) {
  SimSite& s = m_sites[site];
  s.threads = threads;
  s.members = members;
  Message m = message(Msg::hello);
  m.threads = threads;
  m.members = members;
  relay_send_up(site, m);
}

void Simulation::relay_ready(uint32_t site) {
  relay_announce(site, m_sites[site].threads, m_sites[site].members);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::relay_heartbeat, site);
}

void Simulation::relay_worker_gone(uint32_t site, uint32_t worker) {
  SimSite& s = m_sites[site];
  relay_deliver(s.relay.worker_left(local_id(worker), m_now));
  if (s.relay.threads() != s.threads || s.relay.members() != s.members)
    relay_announce(site, s.relay.threads(), s.relay.members());
}

// A site worker's message, over its LAN link.
void Simulation::relay_arrive(const Message& m) {
  const SimWorker& w = m_workers[m.worker];
  const uint32_t site = static_cast<uint32_t>(w.spec.site);
  SimRelay& relay = m_sites[site].relay;
  const WorkerId local = local_id(m.worker);
  relay.heard(local, m_now);
  switch (m.kind) {
    case Msg::hello: relay.worker_joined(local, w.spec.threads, m_now); return;
    case Msg::request: relay_deliver(relay.worker_request(local, static_cast<int>(m.credits), m_now)); break;
    case Msg::result:
      if (std::optional<ForwardedResult> f = relay.worker_finished(local, m.attempt, m.render)) {
        for (const SiteAssignment& other : f->cancels) {  // the first result wins inside the site too
          Message out = message(Msg::cancel);
          out.attempt = other.local;
          relay_send_down(other.worker - 1, out);
        }
        Message up = m;
        up.attempt = f->lease.upstream;
        up.queued += f->waited;  // queueing at the relay, not the WAN's time
        up.credits = up.unstarted = 0;  // the relay's own ask rides on its last result of the turn
        m_sites[site].results_up.push_back(std::move(up));
      }
      // Its next request, carried along; else what it asked for before, as the real relay serves.
      relay_deliver(m.credits > 0 ? relay.worker_request(local, static_cast<int>(m.credits), m_now)
                                  : relay.serve_waiting(local, m_now));
      break;
    case Msg::leave: relay_worker_gone(site, m.worker); break;
    default: return;
  }
  relay_ask(site);
}

// The master's message to a relay, over the WAN.
void Simulation::relay_receive(const Message& m) {
  SimRelay& relay = m_sites[m.site].relay;
  switch (m.kind) {
    case Msg::assign: return relay_deliver(relay.leased(m.attempt, m.block, m_now));
    case Msg::cancel:
      for (const SiteAssignment& held : relay.withdrawn(m.attempt)) {
        Message out = message(Msg::cancel);
        out.attempt = held.local;
        relay_send_down(held.worker - 1, out);
      }
      return relay_ask(m.site);
    case Msg::recall: {
      // Answered even when nothing was unstarted: the master stops waiting.
      Message back = message(Msg::released);
      back.attempts = relay.recall(m.attempts);
      const double bytes = k_small_message + 8.0 * static_cast<double>(back.attempts.size());
      return relay_send_up(m.site, std::move(back), bytes);
    }
    default: return;
  }
}

void Simulation::relay_heartbeat(uint32_t site) {
  SimSite& s = m_sites[site];
  // A relay whose workers are all gone stops too (the master then declares it dead).
  if (std::all_of(s.workers.begin(), s.workers.end(), [&](uint32_t w) { return m_workers[w].gone; })) return;
  relay_send_up(site, message(Msg::heartbeat));
  const double limit = m_o.scheduler.heartbeat_interval * m_o.scheduler.liveness;
  for (const WorkerId silent : s.relay.silent_workers(m_now, limit)) relay_worker_gone(site, silent - 1);
  relay_ask(site);
  push(m_now + m_o.scheduler.heartbeat_interval, Ev::relay_heartbeat, site);
}

// The master's side of a relay: a participant as a worker is, plus the supervisor.
void Simulation::handle_relay(const Message& m) {
  SimSite& site = m_sites[m.worker - m_workers.size()];
  const WorkerId id = m.worker + 1;
  if (m.kind == Msg::hello) {
    if (!site.joined) {
      site.joined = true;
      job().join(id, site.relay.spec().name, m.threads, m_now, m.members);
      m_supervisor.relay_joined(id);
    } else {
      job().resize(id, m.threads, m.members, m_now);  // its site grew or shrank
    }
    return;
  }
  if (!site.joined) return;
  job().heard(id, m_now);
  switch (m.kind) {
    case Msg::request: relay_request(m.worker, RelayAsk{static_cast<int>(m.credits), static_cast<int>(m.unstarted)}); break;
    case Msg::released:
      if (const RecallAnswer answer = m_supervisor.released(job(), id, m.attempts); answer.serve)
        relay_request(answer.serve->first - 1, answer.serve->second);
      break;
    case Msg::result:
      on_result(id, m);
      if (m.credits > 0) relay_request(m.worker, RelayAsk{static_cast<int>(m.credits), static_cast<int>(m.unstarted)});
      break;
    case Msg::heartbeat: job().round_trip(id, site.up.latency + site.down.latency); break;
    default: break;
  }
}

// ServedJob::on_request for a relay: a recall first once the pool is empty, else blocks.
void Simulation::relay_request(uint32_t peer, RelayAsk ask) {
  std::optional<RecallOrder> recall;
  if (m_supervisor.holds_request(job().scheduler(), peer + 1, ask.credits, ask.queued, m_now, recall)) {
    if (recall) {
      Message out = message(Msg::recall);
      out.attempts = std::move(recall->attempts);
      send_down(recall->from - 1, out, k_small_message + 8.0 * static_cast<double>(out.attempts.size()));
    }
    return;
  }
  serve(peer, ask.credits);
}

}  // namespace farm::sim_detail
