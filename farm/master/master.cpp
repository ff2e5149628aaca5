#include "master/master.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <zmq.hpp>

#include "assets/asset_manifest.h"
#include "assets/content_hash.h"
#include "cli/exit_codes.h"
#include "cli/json_text.h"
#include "image/image_io.h"
#include "master/frame_store.h"
#include "master/journal.h"
#include "master/link_estimate.h"
#include "master/progress.h"
#include "master/run_stats.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"
#include "scheduler/scheduler_trace.h"
#include "security/socket_security.h"
#include "security/zap_handler.h"
#include "sim/cost_map_from_blocks.h"

namespace farm {

std::string default_journal_path(const std::string& output_path) { return output_path + ".journal"; }

std::string farm_build_id() { return std::string("farm-0.1 ") + __DATE__ + " " + __TIME__; }

namespace {

using Clock = std::chrono::steady_clock;

// A peer is quarantined after this many bad messages: far above what an honest worker can
// produce (a stale result or two after being declared dead), low enough that a flood costs
// the master a few hundred decodes before its frames are dropped unread.
constexpr uint64_t k_quarantine_after = 100;
// Bad-message counts are kept for at most this many identities (each reconnection is a new
// one); past it the counts, not the quarantines, are forgotten, bounding the master's memory.
constexpr size_t k_max_tracked_peers = 100000;

struct Peer {
  WorkerId id = 0;
  std::string name;
  double last_ping_sent = -1;
  uint64_t ping_sequence = 0;
  double rtt = 0;
  double bandwidth = 0;  // smoothed bytes/s of result transfers, 0 = unknown
  std::set<std::string> assets_sent;  // each asset is shipped to a peer at most once
};

class Master {
 public:
  explicit Master(const MasterOptions& o) : m_o(o), m_start(Clock::now()) {}
  int run();

 private:
  double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  bool setup();
  bool open_journal();
  // Syncs the journal and says how to continue from it (for a job that stops unfinished).
  std::string journal_hint();
  void journal_block(const proto::Result& r, WorkerId worker, const Block& block, const std::vector<uint8_t>& pixels);
  bool send(const std::string& identity, const proto::Message& m);
  void on_frame(const std::string& identity, const uint8_t* data, size_t size);
  void on_hello(const std::string& identity, const proto::Hello& h);
  void on_result(const std::string& identity, Peer& peer, proto::Result& r);
  void heartbeat_round();
  void reap_dead(const std::vector<WorkerId>& dead);
  int finish();
  void write_cost_map() const;
  void bad_input(const std::string& identity, const std::string& what);
  void quarantine(const std::string& identity);
  bool drop_if_quarantined(const std::string& identity, const zmq::message_t& first);
  std::string quarantine_json() const;

  const MasterOptions& m_o;
  Clock::time_point m_start;
  rt::SceneDesc m_desc;
  std::vector<int> m_frames;
  std::vector<ManifestEntry> m_manifest;
  std::map<std::string, const ManifestEntry*> m_by_hash;
  std::vector<std::string> m_overrides;
  proto::PixelEncoding m_encoding = proto::PixelEncoding::srgb8;
  uint64_t m_job_id = 0;
  std::string m_identity;  // what makes a job the same job: scene content, assets, settings
  std::string m_journal_path;
  std::unique_ptr<JournalWriter> m_journal;
  uint64_t m_resumed_blocks = 0;
  std::unique_ptr<std::ofstream> m_trace;  // --trace: every scheduler call, for replay tests
  std::unique_ptr<TracedScheduler> m_scheduler;
  std::unique_ptr<FrameStore> m_store;
  RunStats m_stats;
  zmq::context_t m_ctx;
  // Declared between the context and the socket: it must outlive the socket it guards (fail closed).
  std::unique_ptr<security::ZapHandler> m_zap;
  std::unique_ptr<zmq::socket_t> m_socket;
  std::map<std::string, Peer> m_peers;  // by ZeroMQ routing identity
  std::map<WorkerId, std::string> m_identity_of;
  WorkerId m_next_worker = 1;
  uint64_t m_bad_messages = 0;
  // Quarantine: a peer (routing identity) past k_quarantine_after bad messages is cut off.
  std::map<std::string, uint64_t> m_bad_by_peer;
  struct Quarantined {
    WorkerId worker = 0;  // 0: it never joined
    uint64_t bad_messages = 0;
    uint64_t dropped_frames = 0;
  };
  std::map<std::string, Quarantined> m_quarantined;
  uint64_t m_dropped_frames = 0;
  double m_last_heartbeat = -1;
  double m_alone_since = 0;  // since when no worker is live (--give-up-after)
  Progress m_progress;
};

bool Master::setup() {
  try {
    check_output_path(m_o.render.output_path);
    if (!m_o.tile_map_path.empty()) check_output_path(m_o.tile_map_path);
    if (!m_o.stats_path.empty()) check_output_path(m_o.stats_path + ".png");  // only the folder matters
    const std::filesystem::path cost_dir = std::filesystem::path(m_o.cost_map_path).parent_path();
    if (!cost_dir.empty() && !std::filesystem::is_directory(cost_dir)) {
      throw std::invalid_argument("cost map folder '" + cost_dir.string() + "' does not exist");
    }
    m_desc = load_scene_desc(m_o.render);
    m_frames = frames_to_render(m_o.render, m_desc);
    rt::AssetSearch search;
    search.dirs = m_o.render.asset_dirs;
    m_manifest = build_manifest(m_o.render.scene_path, m_desc, search);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  for (const ManifestEntry& e : m_manifest) m_by_hash[e.ref.hash] = &e;
  // Workers re-parse the same scene with the same effective settings.
  const rt::RenderSettings& s = m_desc.settings;
  m_overrides = {"width=" + std::to_string(s.width), "height=" + std::to_string(s.height),
                 "spp=" + std::to_string(s.spp), "max_depth=" + std::to_string(s.max_depth),
                 "seed=" + std::to_string(s.seed),
                 std::string("integrator=") + (s.integrator == rt::IntegratorKind::whitted ? "whitted" : "path")};
  if (m_o.render.camera) m_overrides.push_back("camera=" + *m_o.render.camera);
  m_encoding = encoding_for_output(m_o.render.output_path);
  // A job identity from the scene's content, its assets and the settings: results of another
  // job are refused, and a journal is resumed only by the job that wrote it.
  m_identity = "scene=" + m_manifest.front().ref.hash + "\n";
  for (size_t i = 1; i < m_manifest.size(); ++i) m_identity += "asset " + m_manifest[i].ref.name + "=" + m_manifest[i].ref.hash + "\n";
  for (const auto& o : m_overrides) m_identity += o + "\n";
  m_identity += "frames=";
  for (int f : m_frames) m_identity += std::to_string(f) + (f == m_frames.back() ? "\n" : ",");
  m_identity += std::string("pixels=") + (m_encoding == proto::PixelEncoding::srgb8 ? "srgb8" : "float32") + "\n";
  std::string h = content_hash(reinterpret_cast<const uint8_t*>(m_identity.data()), m_identity.size());
  m_job_id = std::stoull(h.substr(0, 15), nullptr, 16);

  SchedulerConfig c;
  c.width = s.width;
  c.height = s.height;
  c.frames = m_frames;
  apply_scheduling(m_o.scheduling, m_o.heartbeat_interval, m_o.liveness, c);
  c.result_bytes_per_pixel = static_cast<double>(proto::bytes_per_pixel(m_encoding));
  if (!m_o.trace_path.empty()) {
    m_trace = std::make_unique<std::ofstream>(m_o.trace_path);
    if (!*m_trace) {
      spdlog::error("cannot write the trace to '{}'", m_o.trace_path);
      return false;
    }
  }
  m_scheduler = std::make_unique<TracedScheduler>(c, m_trace.get());
  m_store = std::make_unique<FrameStore>(s.width, s.height, m_frames, m_encoding);
  return open_journal();
}

bool Master::open_journal() {
  if (!m_o.journal) return true;
  m_journal_path = m_o.journal_path.empty() ? default_journal_path(m_o.render.output_path) : m_o.journal_path;
  const std::string& path = m_journal_path;
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  try {
    if (exists && !m_o.resume && !m_o.fresh) {
      // Hours of work may be in it: never discard it silently.
      std::string what;
      try {
        JournalContents c = read_journal(path);
        what = "holds " + std::to_string(c.blocks.size()) + " rendered block(s) of an unfinished job";
      } catch (const JournalError&) {
        what = "exists but is not a valid journal";
      }
      spdlog::error("'{}' {}: pass --resume to continue that job, or --fresh to discard it and start over", path, what);
      return false;
    }
    if (exists && m_o.resume) {
      JournalContents c = read_journal(path);
      if (c.identity != m_identity) {
        spdlog::error("the journal '{}' belongs to another job; it differs in:\n{}Pass the scene and settings it was "
                      "written with, or --fresh to discard it",
                      path, identity_difference(c.identity, m_identity));
        return false;
      }
      const size_t bpp = proto::bytes_per_pixel(m_encoding);
      const rt::RenderSettings& s = m_desc.settings;
      std::string problem = check_exactly_once(c.blocks, s.width, s.height, m_frames, false);
      for (size_t i = 0; problem.empty() && i < c.blocks.size(); ++i) {
        if (c.blocks[i].pixels.size() != static_cast<size_t>(c.blocks[i].rect.pixels()) * bpp)
          problem = "block " + std::to_string(i + 1) + " has the wrong number of pixel bytes";
      }
      if (!problem.empty()) {
        spdlog::error("the journal '{}' is inconsistent ({}); pass --fresh to discard it", path, problem);
        return false;
      }
      std::vector<Block> done;
      int64_t pixels = 0;
      for (const JournalBlock& b : c.blocks) {
        m_store->place(b.rect, b.pixels);
        done.push_back(b.rect);
        pixels += b.rect.pixels();
      }
      m_journal = std::make_unique<JournalWriter>(JournalWriter::resume(path, c, m_o.journal_sync));
      m_scheduler->restore(done, m_journal->first_attempt());
      m_resumed_blocks = done.size();
      spdlog::info("resuming job {:x} from {} (start {}): {} block(s), {:.1f}% of the pixels, already rendered{}", m_job_id,
                   path, m_journal->epoch() + 1, done.size(), 100.0 * pixels / m_scheduler->total_pixels(),
                   c.torn_bytes ? fmt::format("; {} byte(s) of a torn last record cut off", c.torn_bytes) : "");
      return true;
    }
    if (m_o.resume) spdlog::info("no journal at {}: the job starts from the beginning", path);
    m_journal = std::make_unique<JournalWriter>(JournalWriter::create(path, m_identity, m_o.journal_sync));
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  return true;
}

std::string Master::journal_hint() {
  if (!m_journal) return "";
  try {
    m_journal->close();
  } catch (const JournalError& e) {
    return " (" + std::string(e.what()) + ")";
  }
  if (m_scheduler->completed_blocks() + m_resumed_blocks == 0) {
    // Nothing to keep: a journal would only make the next run ask for --resume or --fresh.
    std::error_code ec;
    std::filesystem::remove(m_journal_path, ec);
    return "";
  }
  return "; the " + std::to_string(m_scheduler->completed_blocks() + m_resumed_blocks) +
         " block(s) rendered so far are kept in the journal '" + m_journal_path +
         "': run the same command with --resume to continue";
}

// Durable before the pixels are placed: once a block counts as done it survives a crash.
void Master::journal_block(const proto::Result& r, WorkerId worker, const Block& block, const std::vector<uint8_t>& pixels) {
  if (!m_journal) return;
  try {
    m_journal->block(r.attempt, worker, block, r.render_seconds, pixels);
    m_journal->sync_if_due();
  } catch (const JournalError& e) {
    // The render itself is unaffected; only a crash from now on would lose work.
    spdlog::error("{}: the job goes on without a journal (a crash now would lose the work done)", e.what());
    m_journal.reset();
  }
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
  if (it != m_peers.end()) m_stats.bytes_out(it->second.id, bytes.size());
  return true;
}

void Master::bad_input(const std::string& identity, const std::string& what) {
  ++m_bad_messages;
  // Log the first few in full, then only occasionally: a flood must not flood the log.
  if (m_bad_messages <= 10 || m_bad_messages % 1000 == 0) {
    spdlog::warn("ignored a bad message ({} so far) from peer {}: {}", m_bad_messages,
                 m_peers.count(identity) ? std::to_string(m_peers[identity].id) : "(unknown)", what);
  }
  if (m_bad_by_peer.size() >= k_max_tracked_peers && !m_bad_by_peer.count(identity)) m_bad_by_peer.clear();
  ++m_bad_by_peer[identity];
}

// Called between messages (never inside a handler that still holds a Peer&): the peer leaves
// the scheduler as a dead worker would, its leases go back to the pool, and from now on its
// frames are dropped before decoding.
void Master::quarantine(const std::string& identity) {
  auto bad = m_bad_by_peer.find(identity);
  if (bad == m_bad_by_peer.end() || bad->second <= k_quarantine_after || m_quarantined.count(identity)) return;
  Quarantined& q = m_quarantined[identity];
  q.bad_messages = bad->second;
  m_bad_by_peer.erase(bad);
  auto peer = m_peers.find(identity);
  if (peer != m_peers.end()) {
    const double t = now();
    q.worker = peer->second.id;
    m_scheduler->worker_left(q.worker, t);
    m_stats.left(q.worker, t, true);
    m_identity_of.erase(q.worker);
    m_peers.erase(peer);
  }
  spdlog::warn("peer {} sent {} bad messages: quarantined, its messages are dropped unread from now on{}",
               q.worker ? "worker " + std::to_string(q.worker) : std::string("(unknown)"), q.bad_messages,
               q.worker ? " and its blocks go back to the pool" : "");
}

// True if `identity` is quarantined; its remaining frames are then read and discarded.
bool Master::drop_if_quarantined(const std::string& identity, const zmq::message_t& first) {
  auto q = m_quarantined.find(identity);
  if (q == m_quarantined.end()) return false;
  bool more = first.more();
  while (more) {
    zmq::message_t frame;
    if (!m_socket->recv(frame, zmq::recv_flags::dontwait)) break;
    ++q->second.dropped_frames;
    ++m_dropped_frames;
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
    m_scheduler->worker_joined(p.id, now(), static_cast<int>(h.threads));
    m_stats.joined(p.id, p.name, static_cast<int>(h.threads), now());
    spdlog::info("worker {} '{}' joined with {} thread(s)", p.id, p.name, h.threads);
  }
  proto::Welcome w;
  w.job_id = m_job_id;
  w.scene_name = m_manifest.front().ref.name;
  for (const ManifestEntry& e : m_manifest) w.assets.push_back(e.ref);
  w.overrides = m_overrides;
  w.heartbeat_ms = static_cast<uint32_t>(std::lround(m_o.heartbeat_interval * 1000));
  w.liveness = static_cast<uint32_t>(m_o.liveness);
  w.pixel_encoding = m_encoding;
  w.compression = m_o.compress ? proto::Compression::zstd : proto::Compression::none;
  send(identity, w);
}

void Master::on_result(const std::string& identity, Peer& peer, proto::Result& r) {
  const double t = now();
  if (r.job_id != m_job_id) return bad_input(identity, "result for another job");
  auto lease = m_stats.leases().find(r.attempt);
  if (lease == m_stats.leases().end() || lease->second.worker != peer.id || !(lease->second.block == r.rect)) {
    // Not a lease of this worker, or the rectangle does not match: never commit it.
    m_scheduler->heard_from(peer.id, t);
    if (lease == m_stats.leases().end() || lease->second.worker != peer.id) return bad_input(identity, "unknown lease");
    return bad_input(identity, "result rectangle does not match its lease");
  }
  // From here on the lease is the peer's own but its payload is unusable: give the block back.
  auto reject = [&](const std::string& what) {
    m_scheduler->release(peer.id, r.attempt);
    m_stats.cancelled(r.attempt);
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
  std::string err = proto::decode_pixels(r.pixels, pixels, m_encoding, decoded);
  if (!err.empty()) return reject(err);

  // Link estimate from this transfer: what the round trip leaves after render and queueing.
  double bandwidth = update_bandwidth_estimate(peer.bandwidth, lease->second.assigned, t, r.render_seconds,
                                               r.queued_seconds, peer.rtt, wire_bytes);
  if (bandwidth != peer.bandwidth) {
    peer.bandwidth = bandwidth;
    m_scheduler->network_sample(peer.id, peer.rtt, peer.bandwidth);
  }
  ResultReply reply = m_scheduler->result(peer.id, r.attempt, t);
  bool accepted = reply.outcome == ResultOutcome::accepted;
  m_stats.result(peer.id, r.attempt, t, r.render_seconds, r.queued_seconds, wire_bytes, r.rays, accepted);
  if (!accepted) return;  // late: already settled by another copy
  journal_block(r, peer.id, reply.block, decoded);
  m_store->place(reply.block, decoded);
  for (const Cancel& c : reply.cancels) {
    m_stats.cancelled(c.attempt);
    auto id = m_identity_of.find(c.worker);
    if (id != m_identity_of.end()) send(id->second, proto::Cancel{m_job_id, c.attempt});
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
  m_scheduler->heard_from(peer.id, t);
  std::visit(
      [&](auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::WorkRequest>) {
          for (const Assignment& a : m_scheduler->request(peer.id, t, static_cast<int>(m.credits))) {
            m_stats.assigned(a, t);
            // An undeliverable lease must not pin its block.
            if (!send(identity, proto::Assign{m_job_id, a.attempt, a.block})) {
              m_scheduler->release(peer.id, a.attempt);
              m_stats.cancelled(a.attempt);
            }
          }
        } else if constexpr (std::is_same_v<T, proto::Result>) {
          on_result(identity, peer, m);
        } else if constexpr (std::is_same_v<T, proto::AssetRequest>) {
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
        } else if constexpr (std::is_same_v<T, proto::Heartbeat>) {
          if (m.ping) {
            send(identity, proto::Heartbeat{m.sequence, false});
          } else if (m.sequence == peer.ping_sequence && peer.last_ping_sent >= 0) {
            peer.rtt = t - peer.last_ping_sent;
            m_scheduler->network_sample(peer.id, peer.rtt, peer.bandwidth);
          }
        } else if constexpr (std::is_same_v<T, proto::Error>) {
          spdlog::warn("worker {} reported: {}", peer.id, m.message);
          if (m.code == proto::ErrorCode::scene_failed) {
            m_scheduler->worker_left(peer.id, t);
            m_stats.left(peer.id, t, false);
            m_identity_of.erase(peer.id);
            m_peers.erase(peer_it);
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

void Master::reap_dead(const std::vector<WorkerId>& dead) {
  for (WorkerId id : dead) {
    spdlog::warn("worker {} is silent for {:.1f} s: declared dead, its blocks go back to the pool", id,
                 m_o.heartbeat_interval * m_o.liveness);
    m_stats.left(id, now(), true);
    auto it = m_identity_of.find(id);
    if (it != m_identity_of.end()) {
      m_peers.erase(it->second);
      m_identity_of.erase(it);
    }
  }
}

int Master::run() {
  // Keys first: a command line that would expose the master fails before any work is done.
  std::optional<security::CurveServer> curve;
  try {
    curve = security::server_security(m_o.bind, m_o.key_path, m_o.allow_path, m_o.insecure);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  }
  if (!setup()) return k_exit_bad_input;
  // The ZAP handler is bound before the socket, so no handshake can come before it.
  if (curve) m_zap = std::make_unique<security::ZapHandler>(m_ctx, curve->allowed);
  m_socket = std::make_unique<zmq::socket_t>(m_ctx, zmq::socket_type::router);
  if (curve) security::apply(*m_socket, *curve);
  m_socket->set(zmq::sockopt::linger, 0);            // shut down at once
  m_socket->set(zmq::sockopt::router_mandatory, 1);  // unroutable sends fail loudly
  m_socket->set(zmq::sockopt::sndhwm, 10000);        // bounded memory for slow consumers
  m_socket->set(zmq::sockopt::rcvhwm, 10000);
  // The largest legal inbound message is one result of the largest block.
  int64_t max_block_bytes = static_cast<int64_t>(m_o.scheduling.block) * m_o.scheduling.block * 12;
  m_socket->set(zmq::sockopt::maxmsgsize, std::max<int64_t>(max_block_bytes + (1 << 20), 8 << 20));
  try {
    m_socket->bind(m_o.bind);
  } catch (const zmq::error_t& e) {
    spdlog::error("cannot bind {}: {}", m_o.bind, e.what());
    return k_exit_bad_input;
  }
  std::string endpoint = m_socket->get(zmq::sockopt::last_endpoint);
  spdlog::info("master listening on {} ({}x{}, {} frame(s), {} blocks of {}, policy {})", endpoint,
               m_desc.settings.width, m_desc.settings.height, m_frames.size(), m_scheduler->pending_blocks(),
               m_o.scheduling.block, m_scheduler->policy().name());
  if (m_o.on_bound) m_o.on_bound(endpoint);
  m_progress.start(m_scheduler->total_pixels());

  while (!m_scheduler->done()) {
    if (m_o.stop && m_o.stop->load()) {
      spdlog::error("interrupted: no image written{}", journal_hint());
      return k_exit_failure;
    }
    if (m_o.should_abort) {
      if (std::string why = m_o.should_abort(); !why.empty()) {
        spdlog::error("{}: no image written{}", why, journal_hint());
        return k_exit_failure;
      }
    }
    double t = now();
    if (m_scheduler->live_workers() > 0) {
      m_alone_since = t;
    } else if (m_o.give_up_after > 0 && t - m_alone_since >= m_o.give_up_after) {
      spdlog::error("no worker for {:g} s (--give-up-after): no image written{}", m_o.give_up_after, journal_hint());
      return k_exit_failure;
    }
    if (t - m_last_heartbeat >= m_o.heartbeat_interval) heartbeat_round();
    double next = std::min(m_scheduler->next_deadline(), m_last_heartbeat + m_o.heartbeat_interval);
    long timeout_ms = static_cast<long>(std::clamp((next - t) * 1000.0, 0.0, 100.0));
    zmq::pollitem_t items[] = {{static_cast<void*>(*m_socket), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 1, std::chrono::milliseconds(timeout_ms));
    } catch (const zmq::error_t&) {
      continue;  // EINTR: the stop flag is checked at the top
    }
    // Drain everything that is waiting before ticking again.
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
      if (m_scheduler->done()) break;
    }
    reap_dead(m_scheduler->tick(now()));
    if (m_journal) {
      try {
        m_journal->sync_if_due();
      } catch (const JournalError& e) {
        spdlog::error("{}: the job goes on without a journal (a crash now would lose the work done)", e.what());
        m_journal.reset();
      }
    }
    m_progress.update(now(), m_scheduler->completed_pixels(), m_scheduler->completed_blocks(),
                      m_scheduler->outstanding_blocks(), m_scheduler->live_workers(), m_stats.accepted_rays());
  }
  return finish();
}

int Master::finish() {
  const double makespan = now();
  m_progress.done(makespan);
  for (const auto& [identity, peer] : m_peers) send(identity, proto::JobDone{m_job_id});
  // Let JobDone leave before the socket closes (LINGER 0 would discard it).
  m_socket->set(zmq::sockopt::linger, 500);
  const uint32_t epoch = m_journal ? m_journal->epoch() : 0;
  bool journal_whole = m_journal != nullptr;
  if (m_journal) {
    try {
      m_journal->close();
    } catch (const JournalError& e) {
      spdlog::error("{}", e.what());
      journal_whole = false;
    }
  }
  std::vector<std::string> written;
  try {
    written = m_store->write_all(m_o.render.output_path, m_frames.size() > 1);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    if (journal_whole) {
      spdlog::error("every rendered block is kept in the journal '{}': make room (or fix the path) and run the same "
                    "command with --resume to write the image without rendering again", m_journal_path);
    }
    return k_exit_failure;
  }
  for (const std::string& p : written) spdlog::info("wrote {}", p);
  if (!m_journal_path.empty() && !m_o.keep_journal) {
    std::error_code ec;
    std::filesystem::remove(m_journal_path, ec);
  }
  if (!m_o.tile_map_path.empty()) {
    write_tile_map(m_o.tile_map_path, m_desc.settings.width, m_desc.settings.height, m_store->rgba(m_frames.front()),
                   m_frames.front(), m_stats);
    spdlog::info("wrote tile map {}", m_o.tile_map_path);
  }
  if (!m_o.stats_path.empty()) {
    std::ofstream f(m_o.stats_path);
    f << m_stats.json(*m_scheduler, makespan,
                      {"\"scene\": " + json_string(m_o.render.scene_path), "\"width\": " + std::to_string(m_desc.settings.width),
                       "\"height\": " + std::to_string(m_desc.settings.height),
                       "\"frames\": " + std::to_string(m_frames.size()), "\"spp\": " + std::to_string(m_desc.settings.spp),
                       "\"bad_messages\": " + std::to_string(m_bad_messages), quarantine_json(),
                       "\"dropped_frames\": " + std::to_string(m_dropped_frames),
                       "\"resumed_blocks\": " + std::to_string(m_resumed_blocks),
                       "\"journal_epoch\": " + std::to_string(epoch)});
  }
  if (!m_o.cost_map_path.empty()) write_cost_map();
  spdlog::info("done in {:.3f} s: {} blocks, {} reassigned, {} late results dropped, {} bad messages ignored", makespan,
               m_scheduler->completed_blocks(), m_scheduler->reassignments(), m_scheduler->late_results(), m_bad_messages);
  if (!m_quarantined.empty()) {
    spdlog::info("{} peer(s) quarantined, {} of their frames dropped unread", m_quarantined.size(), m_dropped_frames);
  }
  return k_exit_ok;
}

// "quarantined_peers": [{"worker": ID or 0 if it never joined, "bad_messages": N, "dropped_frames": N}, ...]
std::string Master::quarantine_json() const {
  std::string s = "\"quarantined_peers\": [";
  bool first = true;
  for (const auto& [identity, q] : m_quarantined) {
    s += std::string(first ? "" : ", ") + "{\"worker\": " + std::to_string(q.worker) +
         ", \"bad_messages\": " + std::to_string(q.bad_messages) + ", \"dropped_frames\": " + std::to_string(q.dropped_frames) +
         "}";
    first = false;
  }
  return s + "]";
}

// Throws if the file cannot be written: the job's images are written, but it did not do all it was asked.
void Master::write_cost_map() const {
  std::vector<MeasuredBlock> blocks;
  for (const auto& [attempt, lease] : m_stats.leases()) {
    if (lease.outcome == "accepted") blocks.push_back({lease.block, lease.render_seconds});
  }
  const rt::RenderSettings& s = m_desc.settings;
  CostMap map = cost_map_from_blocks(s.width, s.height, m_frames, blocks);
  map.note = "farm master " + m_o.render.scene_path + " " + std::to_string(s.width) + "x" + std::to_string(s.height) +
             " spp " + std::to_string(s.spp) + "; worker-reported seconds of each block spread over its pixels";
  map.write(m_o.cost_map_path);
  spdlog::info("wrote cost map {} ({} x {} tiles of {} px, total {:.3f} s)", m_o.cost_map_path, map.columns(), map.rows(),
               map.tile(), map.total());
}

}  // namespace

int run_master(const MasterOptions& options) {
  try {
    return Master(options).run();
  } catch (const std::exception& e) {
    spdlog::error("master failed: {}", e.what());
    return k_exit_failure;
  }
}

void apply_scheduling(const SchedulingOptions& o, double heartbeat_interval, int liveness, SchedulerConfig& c) {
  c.block_size = o.block;
  c.min_block = o.min_block;
  c.base_wait = o.wait;
  c.max_copies = o.max_copies;
  c.policy = parse_policy(o.policy).value_or(PolicyKind::seed);
  c.heartbeat_interval = heartbeat_interval;
  c.liveness = liveness;
}

}  // namespace farm
