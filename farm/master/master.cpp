#include "master/master.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "assets/asset_manifest.h"
#include "assets/content_hash.h"
#include "base/json_text.h"
#include "control/job_controller.h"
#include "costs/preview_cost_map.h"
#include "image/image_io.h"
#include "job/job_identity.h"
#include "job/job_settings.h"
#include "master/frame_store.h"
#include "master/job_journal.h"
#include "master/job_outputs.h"
#include "master/live_publisher.h"
#include "master/peer_quarantine.h"
#include "master/progress.h"
#include "master/router_socket.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"
#include "security/socket_security.h"
#include "security/zap_handler.h"

namespace farm {

namespace {

using Clock = std::chrono::steady_clock;

struct Peer {
  WorkerId id = 0;
  std::string name;
  double last_ping_sent = -1;
  uint64_t ping_sequence = 0;
  std::set<std::string> assets_sent;  // each asset is shipped to a peer at most once
};

class Master {
 public:
  explicit Master(const MasterOptions& o) : m_o(o), m_start(Clock::now()) {}
  RunStatus run();

 private:
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  bool setup();
  bool open_socket(const std::optional<security::CurveServer>& curve);
  bool send(const std::string& identity, const proto::Message& m);
  void receive_all();
  void on_frame(const std::string& identity, const uint8_t* data, size_t size);
  void on_hello(const std::string& identity, const proto::Hello& h);
  void on_request(const std::string& identity, const Peer& peer, const proto::WorkRequest& m);
  void on_result(const std::string& identity, Peer& peer, proto::Result& r);
  void on_asset_request(const std::string& identity, Peer& peer, const proto::AssetRequest& m);
  void heartbeat_round();
  void forget(WorkerId worker);
  std::string abort_reason();
  RunStatus finish();
  void bad_input(const std::string& identity, const std::string& what);
  void quarantine(const std::string& identity);
  bool drop_if_quarantined(const std::string& identity, const zmq::message_t& first);

  const MasterOptions& m_o;
  Clock::time_point m_start;
  rt::SceneDesc m_desc;
  std::vector<int> m_frames;
  std::vector<ManifestEntry> m_manifest;
  std::map<std::string, const ManifestEntry*> m_by_hash;
  proto::PixelEncoding m_encoding = proto::PixelEncoding::srgb8;
  proto::JobSettings m_settings;  // what every worker renders
  JobIdentity m_job_identity;
  uint64_t m_job_id = 0;
  std::unique_ptr<std::ofstream> m_trace;  // --trace: every scheduler call, for replay tests
  std::unique_ptr<JobController> m_job;
  std::unique_ptr<FrameStore> m_store;
  std::unique_ptr<JobJournal> m_journal;
  zmq::context_t m_ctx;
  // Declared between the context and the socket: it must outlive the socket it guards (fail closed).
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<zmq::socket_t> m_socket;
  std::map<std::string, Peer> m_peers;  // by ZeroMQ routing identity
  std::map<WorkerId, std::string> m_identity_of;
  WorkerId m_next_worker = 1;
  PeerQuarantine m_quarantine;
  double m_last_heartbeat = -1;
  double m_alone_since = 0;  // since when no worker is live (--give-up-after)
  Progress m_progress;
  std::unique_ptr<LiveServer> m_live_server;  // --http
  std::unique_ptr<LivePublisher> m_live;
  bool start_live_view();
  void live_finished(const std::string& outcome);
  void linger_live_view();
};

bool Master::setup() {
  try {
    check_job_output_paths(m_o);
    m_desc = load_scene_desc(m_o.render);
    m_frames = frames_to_render(m_o.render, m_desc);
    rt::AssetSearch search;
    search.dirs = m_o.render.asset_dirs;
    m_manifest = build_manifest(m_o.render.scene_path, m_desc, search);
    for (const ManifestEntry& e : m_manifest) m_by_hash[e.ref.hash] = &e;
    m_encoding = encoding_for_output(m_o.render.output_path);
    m_settings = job_settings(m_desc.settings, m_o.render.camera);
    m_job_identity = make_job_identity(m_manifest, m_settings, m_frames, m_encoding);
    m_job_id = m_job_identity.id;

    const rt::RenderSettings& s = m_desc.settings;
    SchedulerConfig c = m_o.scheduling;
    c.width = s.width;
    c.height = s.height;
    c.frames = m_frames;
    c.result_bytes_per_pixel = static_cast<double>(proto::bytes_per_pixel(m_encoding));
    if (c.policy == PolicyKind::factoring && m_o.preview_costs) {
      PreviewResult preview = preview_block_cost(m_desc, m_frames.front(), c);
      spdlog::info("preview for the factoring policy's block costs: {}x{}, 1 spp, {:.2f} s (--no-preview to skip)",
                   preview.width, preview.height, preview.wall_seconds);
    }
    if (!m_o.trace_path.empty()) {
      m_trace = std::make_unique<std::ofstream>(m_o.trace_path);
      if (!*m_trace) throw std::runtime_error("cannot write the trace to '" + m_o.trace_path + "'");
    }
    m_job = std::make_unique<JobController>(c, m_trace.get());
    m_store = std::make_unique<FrameStore>(s.width, s.height, m_frames, m_encoding);
    JobJournalOptions j;
    j.enabled = m_o.journal;
    j.path = m_o.journal_path.empty() ? default_journal_path(m_o.render.output_path) : m_o.journal_path;
    j.resume = m_o.resume;
    j.fresh = m_o.fresh;
    j.sync_interval = m_o.journal_sync;
    m_journal = std::make_unique<JobJournal>(j, m_job_identity, m_frames, proto::bytes_per_pixel(m_encoding), *m_store,
                                             m_job->scheduler());
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  return true;
}

bool Master::send(const std::string& identity, const proto::Message& m) {
  std::vector<uint8_t> bytes = proto::encode(m);
  try {
    // ROUTER_MANDATORY makes an unroutable peer an error instead of a silent drop; a full
    // queue (slow consumer past its high-water mark) is also reported rather than blocking.
    if (!m_socket->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
    if (!m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait)) return false;
  } catch (const zmq::error_t& e) {
    spdlog::debug("cannot send {} to a peer: {}", proto::message_name(m), e.what());
    return false;
  }
  auto it = m_peers.find(identity);
  if (it != m_peers.end()) m_job->bytes_out(it->second.id, bytes.size());
  return true;
}

void Master::bad_input(const std::string& identity, const std::string& what) {
  const uint64_t n = m_quarantine.count(identity);
  // Log the first few in full, then only occasionally: a flood must not flood the log.
  if (n <= 10 || n % 1000 == 0) {
    auto peer = m_peers.find(identity);
    spdlog::warn("ignored a bad message ({} so far) from peer {}: {}", n,
                 peer != m_peers.end() ? std::to_string(peer->second.id) : "(unknown)", what);
  }
}

// The master's side of a worker that is gone: no more messages to it.
void Master::forget(WorkerId worker) {
  auto it = m_identity_of.find(worker);
  if (it == m_identity_of.end()) return;
  auto peer = m_peers.find(it->second);
  if (peer != m_peers.end() && m_o.on_worker_change) m_o.on_worker_change(peer->second.name, false);
  m_peers.erase(it->second);
  m_identity_of.erase(it);
}

// Called between messages (never inside a handler that still holds a Peer&): the peer leaves
// the scheduler as a dead worker would, its leases go back to the pool, and from now on its
// frames are dropped before decoding.
void Master::quarantine(const std::string& identity) {
  std::optional<uint64_t> bad = m_quarantine.due(identity);
  if (!bad) return;
  WorkerId worker = 0;
  auto peer = m_peers.find(identity);
  if (peer != m_peers.end()) {
    worker = peer->second.id;
    m_quarantine.set_worker(identity, worker);
    m_job->leave(worker, now(), true);
    forget(worker);
  }
  spdlog::warn("peer {} sent {} bad messages: quarantined, its messages are dropped unread from now on{}",
               worker ? "worker " + std::to_string(worker) : std::string("(unknown)"), *bad,
               worker ? " and its blocks go back to the pool" : "");
}

// True if `identity` is quarantined; its remaining frames are then read and discarded.
bool Master::drop_if_quarantined(const std::string& identity, const zmq::message_t& first) {
  if (!m_quarantine.contains(identity)) return false;
  bool more = first.more();
  while (more) {
    zmq::message_t frame;
    if (!m_socket->recv(frame, zmq::recv_flags::dontwait)) break;
    m_quarantine.dropped_frame(identity);
    more = frame.more();
  }
  return true;
}

void Master::on_hello(const std::string& identity, const proto::Hello& h) {
  if (h.protocol_version != proto::k_protocol_version) {
    spdlog::warn("refused worker '{}': protocol {} (this master speaks {})", h.worker_name, h.protocol_version,
                 proto::k_protocol_version);
    send(identity, proto::Error{proto::ErrorCode::incompatible,
                                "protocol version " + std::to_string(h.protocol_version) + " is not supported; master speaks " +
                                    std::to_string(proto::k_protocol_version)});
    return;
  }
  auto it = m_peers.find(identity);
  if (it == m_peers.end()) {
    Peer p;
    p.id = m_next_worker++;
    p.name = h.worker_name.empty() ? "worker-" + std::to_string(p.id) : h.worker_name;
    it = m_peers.emplace(identity, p).first;
    m_identity_of[p.id] = identity;
    m_job->join(p.id, p.name, static_cast<int>(h.threads), now());
    spdlog::info("worker {} '{}' joined with {} thread(s)", p.id, p.name, h.threads);
    if (m_o.on_worker_change) m_o.on_worker_change(p.name, true);
  }
  proto::Welcome w;
  w.job_id = m_job_id;
  w.scene_name = m_manifest.front().ref.name;
  for (const ManifestEntry& e : m_manifest) w.assets.push_back(e.ref);
  w.settings = m_settings;
  w.heartbeat_ms = static_cast<uint32_t>(std::lround(m_o.scheduling.heartbeat_interval * 1000));
  w.liveness = static_cast<uint32_t>(m_o.scheduling.liveness);
  w.pixel_encoding = m_encoding;
  w.compression = m_o.compress ? proto::Compression::zstd : proto::Compression::none;
  send(identity, w);
}

void Master::on_request(const std::string& identity, const Peer& peer, const proto::WorkRequest& m) {
  for (const Assignment& a : m_job->request(peer.id, now(), static_cast<int>(m.credits))) {
    if (!send(identity, proto::Assign{m_job_id, a.attempt, a.block})) m_job->undeliverable(peer.id, a.attempt);
  }
}

void Master::on_result(const std::string& identity, Peer& peer, proto::Result& r) {
  const double t = now();
  if (r.job_id != m_job_id) return bad_input(identity, "result for another job");
  switch (m_job->check_lease(peer.id, r.attempt, r.rect)) {
    // Not a lease of this worker, or the rectangle does not match: never commit it.
    case LeaseCheck::unknown_lease: return bad_input(identity, "unknown lease");
    case LeaseCheck::wrong_rectangle: return bad_input(identity, "result rectangle does not match its lease");
    case LeaseCheck::ok: break;
  }
  // From here on the lease is the peer's own but its payload may be unusable: give the block back.
  auto reject = [&](const std::string& what) {
    m_job->reject(peer.id, r.attempt);
    bad_input(identity, what);
  };
  if (r.encoding != m_encoding) return reject("result in the wrong pixel encoding");
  const size_t pixels = static_cast<size_t>(r.rect.pixels());
  const size_t expected = pixels * proto::bytes_per_pixel(m_encoding);
  const uint64_t wire_bytes = r.pixels.size();
  if (r.compression == proto::Compression::zstd) {
    auto raw = proto::decompress(r.pixels, expected);
    if (!raw) return reject("undecodable compressed pixels");
    r.pixels = std::move(*raw);
  }
  std::vector<uint8_t> decoded;
  if (Status s = proto::decode_pixels(r.pixels, pixels, m_encoding, decoded); !s.ok()) return reject(s.message());

  ResultReply reply = m_job->result(peer.id, r.attempt, t, ResultReport{r.render_seconds, r.queued_seconds, wire_bytes, r.rays});
  if (reply.outcome != ResultOutcome::accepted) return;  // late: already settled by another copy
  m_journal->record(r.attempt, peer.id, reply.block, r.render_seconds, decoded);
  m_store->place(reply.block, decoded);
  if (m_live) m_live->block_accepted(reply.block, peer.id, decoded);
  for (const Cancel& c : reply.cancels) {
    auto id = m_identity_of.find(c.worker);
    if (id != m_identity_of.end()) send(id->second, proto::Cancel{m_job_id, c.attempt});
  }
}

void Master::on_asset_request(const std::string& identity, Peer& peer, const proto::AssetRequest& m) {
  for (const std::string& hash : m.hashes) {
    auto it = m_by_hash.find(hash);
    if (it == m_by_hash.end()) {
      bad_input(identity, "request for an unknown asset");
      continue;
    }
    // Once per peer: a flood of requests for a large mesh must not fill memory.
    if (!peer.assets_sent.insert(hash).second) continue;
    auto bytes = read_file_bytes(it->second->path);
    if (!bytes) {
      spdlog::error("cannot read asset '{}' any more", it->second->path);
      continue;
    }
    send(identity, proto::AssetData{hash, std::move(*bytes)});
  }
}

void Master::on_frame(const std::string& identity, const uint8_t* data, size_t size) {
  proto::Decoded d = proto::decode(data, size);
  if (!d.message) return bad_input(identity, d.error);
  auto peer_it = m_peers.find(identity);
  if (auto* hello = std::get_if<proto::Hello>(&*d.message)) return on_hello(identity, *hello);
  if (peer_it == m_peers.end()) {
    // Declared dead, or never said hello: it must (re)join first.
    send(identity, proto::Error{proto::ErrorCode::bad_message, "not joined: send Hello"});
    return;
  }
  Peer& peer = peer_it->second;
  const double t = now();
  m_job->heard(peer.id, t);
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::WorkRequest>) {
          on_request(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::Result>) {
          on_result(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::AssetRequest>) {
          on_asset_request(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::Heartbeat>) {
          if (m.ping) {
            send(identity, proto::Heartbeat{m.sequence, false});
          } else if (m.sequence == peer.ping_sequence && peer.last_ping_sent >= 0) {
            m_job->round_trip(peer.id, t - peer.last_ping_sent);
          }
        } else if constexpr (std::is_same_v<T, proto::Error>) {
          spdlog::warn("worker {} reported: {}", peer.id, m.message);
          if (m.code == proto::ErrorCode::scene_failed) {
            m_job->leave(peer.id, t, false);
            forget(peer.id);
          }
        } else {
          bad_input(identity, std::string("unexpected ") + proto::message_name(*d.message));
        }
      },
      *d.message);
}

void Master::heartbeat_round() {
  const double t = now();
  for (auto& [identity, peer] : m_peers) {
    peer.ping_sequence++;
    peer.last_ping_sent = t;
    send(identity, proto::Heartbeat{peer.ping_sequence, true});
  }
  m_last_heartbeat = t;
}

bool Master::open_socket(const std::optional<security::CurveServer>& curve) {
  // The ZAP handler is bound before the socket, so no handshake can come before it.
  if (curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, curve->allowed);
  try {
    m_socket = open_router_socket(m_ctx, m_o.bind, curve, m_o.scheduling.block_size);
  } catch (const zmq::error_t& e) {
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return false;
  }
  return true;
}

// Why the job must stop now ("" to go on): Ctrl-C, the caller, or no worker for too long.
std::string Master::abort_reason() {
  if (m_o.stop && m_o.stop->load()) return "interrupted";
  if (m_o.should_abort)
    if (std::string why = m_o.should_abort(); !why.empty()) return why;
  const double t = now();
  if (m_job->scheduler().live_workers() > 0) {
    m_alone_since = t;
  } else if (m_o.give_up_after > 0 && t - m_alone_since >= m_o.give_up_after) {
    return fmt::format("no worker for {:g} s (--give-up-after)", m_o.give_up_after);
  }
  return "";
}

// Drains everything that is waiting before ticking again.
void Master::receive_all() {
  for (int budget = 0; budget < 10000; ++budget) {
    zmq::message_t identity, payload;
    if (!m_socket->recv(identity, zmq::recv_flags::dontwait)) break;
    std::string id(static_cast<const char*>(identity.data()), identity.size());
    if (drop_if_quarantined(id, identity)) continue;
    bool complete = identity.more() && m_socket->recv(payload, zmq::recv_flags::dontwait).has_value();
    // Extra frames are not part of the protocol: drain and reject.
    bool extra = false;
    while (payload.more()) {
      zmq::message_t rest;
      if (!m_socket->recv(rest, zmq::recv_flags::dontwait)) break;
      extra = true;
      if (!rest.more()) break;
    }
    if (!complete || extra) {
      bad_input(id, "wrong number of frames");
      quarantine(id);
      continue;
    }
    on_frame(id, static_cast<const uint8_t*>(payload.data()), payload.size());
    quarantine(id);  // if this message took it past the limit
    if (m_job->scheduler().done()) break;
  }
}

RunStatus Master::run() {
  // Keys first: a command line that would expose the master fails before any work is done.
  std::optional<security::CurveServer> curve;
  try {
    curve = m_o.curve ? m_o.curve : security::server_security(m_o.bind, m_o.key_path, m_o.allow_path, m_o.insecure);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return RunStatus::bad_input;
  }
  if (!setup() || !open_socket(curve) || !start_live_view()) return RunStatus::bad_input;
  struct Linger {  // on every way out once the live view runs
    Master& m;
    ~Linger() { m.linger_live_view(); }
  } linger{*this};
  const Scheduler& scheduler = m_job->scheduler();
  std::string endpoint = m_socket->get(zmq::sockopt::last_endpoint);
  spdlog::info("master listening on {} ({}x{}, {} frame(s), {} blocks of {}, policy {})", endpoint,
               m_desc.settings.width, m_desc.settings.height, m_frames.size(), scheduler.pending_blocks(),
               m_o.scheduling.block_size, scheduler.policy().name());
  if (m_o.on_bound) m_o.on_bound(endpoint);
  m_progress.start(scheduler.total_pixels());

  while (!scheduler.done()) {
    if (std::string why = abort_reason(); !why.empty()) {
      spdlog::error("{}: no image written{}", why, m_journal->stop_hint(scheduler.completed_blocks()));
      live_finished("failed: " + why);
      return RunStatus::failure;
    }
    const double t = now();
    const double interval = m_o.scheduling.heartbeat_interval;
    if (t - m_last_heartbeat >= interval) heartbeat_round();
    double next = std::min(scheduler.next_deadline(), m_last_heartbeat + interval);
    long timeout_ms = static_cast<long>(std::clamp((next - t) * 1000.0, 0.0, 100.0));
    zmq::pollitem_t items[] = {{static_cast<void*>(*m_socket), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(timeout_ms));
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    receive_all();
    for (WorkerId id : m_job->tick(now())) {
      spdlog::warn("worker {} is silent for {:.1f} s: declared dead, its blocks go back to the pool", id,
                   interval * m_o.scheduling.liveness);
      forget(id);
    }
    m_journal->sync_if_due();
    m_progress.update(now(), scheduler.completed_pixels(), scheduler.completed_blocks(), scheduler.outstanding_blocks(),
                      scheduler.live_workers(), m_job->stats().accepted_rays());
    if (m_live) m_live->maybe_publish(now(), *m_job);
  }
  return finish();
}

bool Master::start_live_view() {
  if (m_o.http.empty()) return true;
  try {
    LiveServerOptions o = parse_http_address(m_o.http);
    o.token = m_o.http_token;
    if (!is_loopback_address(o.address) && o.token.empty())
      throw std::invalid_argument("--http " + m_o.http + " is reachable from other machines: give --http-token");
    m_live_server = std::make_unique<LiveServer>(o, m_desc.settings.width, m_desc.settings.height);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  m_live = std::make_unique<LivePublisher>(*m_live_server, m_o.render.scene_path, m_frames.front(),
                                           static_cast<int>(m_frames.size()), m_encoding);
  m_live->maybe_publish(now(), *m_job);
  spdlog::info("live view: {}", m_live_server->url());
  return true;
}

void Master::linger_live_view() {
  if (!m_live || m_o.http_linger <= 0) return;
  spdlog::info("live view: serving the final state for {:g} s more", m_o.http_linger);
  const double until = now() + m_o.http_linger;
  while (now() < until && !(m_o.stop && m_o.stop->load())) std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void Master::live_finished(const std::string& outcome) {
  if (!m_live) return;
  const Scheduler& s = m_job->scheduler();
  m_live->finish(now(), *m_job, outcome,
                 {"blocks " + std::to_string(s.completed_blocks()) + ", reassigned " + std::to_string(s.reassignments()) +
                  ", late results " + std::to_string(s.late_results())});
}

RunStatus Master::finish() {
  const double makespan = now();
  m_progress.done(makespan);
  for (const auto& [identity, peer] : m_peers) send(identity, proto::JobDone{m_job_id});
  // Let JobDone leave before the socket closes (LINGER 0 would discard it).
  m_socket->set(zmq::sockopt::linger, 500);
  const bool journal_whole = m_journal->close();
  std::vector<std::string> written;
  try {
    written = m_store->write_all(m_o.render.output_path, m_frames.size() > 1);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    if (journal_whole) {
      spdlog::error("every rendered block is kept in the journal '{}': make room (or fix the path) and run the same "
                    "command with --resume to write the image without rendering again", m_journal->path());
    }
    live_finished(std::string("failed: ") + e.what());
    return RunStatus::failure;
  }
  for (const std::string& p : written) spdlog::info("wrote {}", p);
  live_finished("complete in " + fixed(makespan, 3) + " s");
  m_journal->remove_unless(m_o.keep_journal);
  write_job_outputs(m_o, m_desc.settings, m_frames, *m_store, *m_job, makespan,
                    {json_field("bad_messages", m_quarantine.bad_messages()),
                     json_raw_field("quarantined_peers", m_quarantine.json()),
                     json_field("dropped_frames", m_quarantine.dropped_frames()),
                     json_field("resumed_blocks", m_journal->resumed_blocks()),
                     json_field("journal_epoch", m_journal->epoch())});
  const Scheduler& s = m_job->scheduler();
  spdlog::info("done in {:.3f} s: {} blocks, {} reassigned, {} late results dropped, {} bad messages ignored", makespan,
               s.completed_blocks(), s.reassignments(), s.late_results(), m_quarantine.bad_messages());
  if (m_quarantine.size()) {
    spdlog::info("{} peer(s) quarantined, {} of their frames dropped unread", m_quarantine.size(),
                 m_quarantine.dropped_frames());
  }
  return RunStatus::ok;
}

}  // namespace

RunStatus run_master(const MasterOptions& options) {
  try {
    return Master(options).run();
  } catch (const std::exception& e) {
    spdlog::error("master failed: {}", e.what());
    return RunStatus::failure;
  }
}

}  // namespace farm
