#include "worker/worker.h"

#include "backend/renderer_process.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <utility>
#include <zmq.hpp>

#include "assets/asset_cache.h"
#include "assets/asset_manifest.h"
#include "job/build_id.h"
#include "job/run_status.h"
#include "protocol/pixel_codec.h"
#include "transport/endpoint_check.h"
#include "protocol/fetch_patience.h"
#include "protocol/protocol.h"
#include "transport/flow.h"
#include "transport/sockets.h"
#include "security/endpoint_kind.h"
#include "security/handshake_watch.h"
#include "security/launch_secrets.h"
#include "security/socket_security.h"
#include "session/upstream_link.h"
#include "worker/job_loader.h"
#include "worker/render_pool.h"

namespace farm {

namespace {

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
  uint64_t declared_size(const std::string& hash) const;

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
  std::set<std::string> m_missing;
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

Worker::Worker(const WorkerOptions& o, std::optional<security::CurveClient> curve, std::string fallback_key)
    : m_o(o),
      m_threads(o.threads > 0 ? o.threads : tbb::info::default_concurrency()),
      m_cache(o.cache_dir.empty() ? default_cache_dir() : o.cache_dir),
      m_link({o.max_backoff, o.give_up_after, !o.fallback.empty() && !fallback_key.empty() && curve.has_value()}, 0) {
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

void Worker::reset_job() {
  if (m_loading.valid()) m_abandoned.push_back(std::move(m_loading));
  m_pool.reset();
  m_loaded.reset();
  {
    std::lock_guard<std::mutex> lock(m_done_mutex);
    m_done.clear();
  }
  m_assigned = 0;
  m_state = State::joining;
}

void Worker::on_welcome(const proto::Welcome& w) {
  if (w.protocol_version != proto::k_protocol_version) return;
  if (w.job_id == m_failed_job) return;  // we could not load it before; we will not now
  if (m_state != State::joining && w.job_id == m_job.job_id) return;  // a repeated welcome
  if (m_state != State::joining) reset_job();
  m_job = w;
  m_missing.clear();
  for (const proto::AssetRef& a : w.assets) {
    const AssetCache::Object cached = m_cache.check(a.hash);
    if (cached == AssetCache::Object::changed) {
      spdlog::warn("the cached copy of asset '{}' ({}) no longer matches its hash: something wrote to it (a renderer "
                   "through an earlier job's folder?); it was removed and is fetched again from the master",
                   a.name, a.hash);
    }
    if (cached != AssetCache::Object::intact) m_missing.insert(a.hash);
  }
  spdlog::info("joined job {:x}: scene '{}', {} asset(s), {} to fetch", w.job_id, w.scene_name, w.assets.size(),
               m_missing.size());
  if (m_missing.empty()) {
    start_loading();
  } else {
    m_state = State::fetching;
    send(proto::AssetRequest{{m_missing.begin(), m_missing.end()}});
  }
}

// A job this worker cannot take as the master sent it (a value past this build's protocol
// bounds: a master of another build, or one that did not check its scene): said, not dropped,
// or the master would wait for this worker forever. It stays connected and idle; the master
// ends the job when no connected worker can take it.
void Worker::refuse_welcome(const std::string& why) {
  spdlog::error("cannot take the master's job: {}", why);
  if (m_state != State::joining) reset_job();  // a Welcome is a new job: the old one is over
  send(proto::Error{proto::ErrorCode::bad_message, ("this worker cannot take the job as sent: " + why).substr(0, 1000)});
}

void Worker::start_loading() {
  m_state = State::loading;
  // The scene must be one of the shipped files: a name outside the job folder is refused.
  bool known = std::any_of(m_job.assets.begin(), m_job.assets.end(),
                           [&](const proto::AssetRef& a) { return a.name == m_job.scene_name; });
  std::string dir;
  try {
    if (!known || !is_safe_relative_name(m_job.scene_name)) {
      fail_job("unsafe scene name '" + m_job.scene_name + "'", proto::ErrorCode::bad_message);
      return;
    }
    // One folder per process and load: local workers share a cache but never a job folder.
    dir = m_cache.materialize(m_job.job_id, m_job.assets, std::to_string(::getpid()) + "." +
                                                              std::to_string(++m_load_generation));
  } catch (const std::exception& e) {
    fail_job(e.what(), proto::ErrorCode::internal);  // this worker's cache, not the scene
    return;
  }
  m_job_dirs.push_back(dir);
  std::string scene_path = (std::filesystem::path(dir) / m_job.scene_name).string();
  const proto::JobSettings settings = m_job.settings;
  if (std::optional<JobRefusal> refused = check_job_renderer(scene_path, settings)) {
    fail_job(refused->message, refused->code);
    return;
  }
  // Loading can take long (meshes, BVH): do it off the I/O thread so heartbeats go on.
  m_loading = std::async(std::launch::async, [scene_path, settings, this] {
    std::unique_ptr<LoadedJob> loaded = load_job(scene_path, settings, m_threads);
    uint64_t one = 1;
    (void)::write(m_event_fd, &one, sizeof one);
    return loaded;
  });
}

// scene_failed means the scene itself is bad (every worker would fail the same way: its files
// are the master's, byte for byte), so the master ends the job; internal is this worker's own
// trouble (memory, disk), and the master carries on with the others.
void Worker::fail_job(const std::string& why, proto::ErrorCode code) {
  spdlog::error("cannot load the job's scene: {}", why);
  std::string message = why;
  if (code == proto::ErrorCode::scene_failed && !m_job_dirs.empty()) {
    // Names relative to the scene's folder: the worker's cache path means nothing to the user.
    const std::string prefix = m_job_dirs.back() + "/";
    for (size_t at; (at = message.find(prefix)) != std::string::npos;) message.erase(at, prefix.size());
  }
  send(proto::Error{code, message.substr(0, 1000)});
  m_failed_job = m_job.job_id;
  m_state = State::joining;
}

void Worker::finish_loading() {
  try {
    m_loaded = m_loading.get();
  } catch (const rt::SceneError& e) {
    fail_job(e.what(), proto::ErrorCode::scene_failed);
    return;
  } catch (const std::exception& e) {
    fail_job(e.what(), proto::ErrorCode::internal);
    return;
  }
  // A renderer whose processes mostly wait gets several blocks per thread at once.
  m_render_slots = m_threads * m_loaded->renders_per_thread;
  m_pool = std::make_unique<RenderPool>(*m_loaded->renderer, m_render_slots, [this](RenderOutput&& out) {
    {
      std::lock_guard<std::mutex> lock(m_done_mutex);
      m_done.push_back(std::move(out));
    }
    uint64_t one = 1;
    (void)::write(m_event_fd, &one, sizeof one);
  }, m_o.null_render, m_o.hang_after);
  m_state = State::working;
  if (m_render_slots == m_threads) {
    spdlog::info("scene loaded; rendering with {} thread(s)", m_threads);
  } else {
    spdlog::info("scene loaded; rendering with {} thread(s), {} blocks at once", m_threads, m_render_slots);
  }
  request_work();
}

uint32_t Worker::wanted_blocks() const {
  const size_t capacity = static_cast<size_t>(m_render_slots + std::max(0, m_o.prefetch));
  if (m_state != State::working || m_assigned >= capacity) return 0;
  return static_cast<uint32_t>(capacity - m_assigned);
}

void Worker::request_work() {
  const uint32_t wanted = wanted_blocks();
  if (wanted == 0) return;
  send(proto::WorkRequest{wanted});
  m_last_request = now();
}

void Worker::drain_results() {
  std::deque<RenderOutput> done;
  {
    std::lock_guard<std::mutex> lock(m_done_mutex);
    done.swap(m_done);
  }
  m_assigned -= std::min<size_t>(m_assigned, done.size());  // each ends a block, whatever became of it
  // In the order they finished (a success between failures resets the master's count of failures
  // in a row), the next request riding on the last result: one message per block instead of two.
  std::vector<proto::Message> out;
  std::optional<size_t> last_result;
  for (RenderOutput& o : done) {
    if (!o.failure.empty()) {
      // Said, not left to the lease: a master whose only idle worker holds the block would never
      // give it out again. The reason is cut to what the protocol carries.
      out.emplace_back(proto::BlockFailed{m_job.job_id, o.task.attempt, o.task.rect, o.failure.substr(0, 2000)});
      continue;
    }
    if (o.cancelled) continue;
    last_result = out.size();
    out.emplace_back(result_of(o));
  }
  if (last_result) {
    auto& r = std::get<proto::Result>(out[*last_result]);
    r.next_credits = wanted_blocks();
    if (r.next_credits > 0) m_last_request = now();
  }
  for (const proto::Message& m : out) send(m);
  if (!last_result && !done.empty()) request_work();
}

proto::Result Worker::result_of(RenderOutput& out) const {
  proto::Result r;
  r.job_id = m_job.job_id;
  r.attempt = out.task.attempt;
  r.rect = out.task.rect;
  r.encoding = m_job.pixel_encoding;
  std::vector<uint8_t> raw = proto::encode_pixels(out.rgba.data(), out.rgba.size() / 4, m_job.pixel_encoding);
  r.raw_size = raw.size();
  if (m_job.compression == proto::Compression::zstd) {
    r.compression = proto::Compression::zstd;
    r.pixels = proto::compress(raw);
  } else {
    r.pixels = std::move(raw);
  }
  r.render_seconds = out.render_seconds;
  r.queued_seconds = out.queued_seconds;
  r.fixed_seconds = out.fixed_seconds;
  r.rays = out.rays;
  return r;
}

std::optional<RunStatus> Worker::on_message(const proto::Message& message) {
  if (const auto* w = std::get_if<proto::Welcome>(&message)) {
    on_welcome(*w);
  } else if (const auto* a = std::get_if<proto::AssetData>(&message)) {
    if (m_state == State::fetching && m_missing.count(a->hash)) {
      // Two failures with different culprits: content the master did not promise, or a cache
      // this machine cannot write (disk full): the latter is said as such, not blamed on it.
      if (Status valid = AssetCache::verify(a->hash, declared_size(a->hash), a->data); !valid.ok()) {
        spdlog::error("bad asset from the master: {}", valid.message());
        return RunStatus::failure;
      }
      if (Status stored = m_cache.store(a->hash, a->data); !stored.ok()) {
        spdlog::error("cannot store an asset in this worker's cache: {}; the partial file was removed: make room in "
                      "'{}' or pass another --cache",
                      stored.message(), m_cache.root());
        return RunStatus::failure;
      }
      m_missing.erase(a->hash);
      if (m_missing.empty()) start_loading();
    }
  } else if (const auto* assign = std::get_if<proto::Assign>(&message)) {
    if (m_state == State::working && assign->job_id == m_job.job_id) {
      const LoadedJob& s = *m_loaded;
      const Block& b = assign->rect;
      if (b.x + b.width > s.width || b.y + b.height > s.height || b.frame > s.frames) {
        spdlog::warn("ignored an assignment outside the job's image");
      } else {
        ++m_assigned;
        m_pool->submit({assign->attempt, assign->rect, 0});
      }
    }
  } else if (const auto* c = std::get_if<proto::Cancel>(&message)) {
    if (m_pool && c->job_id == m_job.job_id) m_pool->cancel(c->attempt);
  } else if (const auto* h = std::get_if<proto::Heartbeat>(&message)) {
    if (h->ping) send(proto::Heartbeat{h->sequence, false});
  } else if (const auto* d = std::get_if<proto::JobDone>(&message)) {
    if (d->job_id == m_job.job_id) {
      spdlog::info("job {:x} is done", d->job_id);
      reset_job();
      if (m_o.once) return RunStatus::ok;
    }
  } else if (const auto* e = std::get_if<proto::Error>(&message)) {
    if (e->code == proto::ErrorCode::incompatible) {
      spdlog::error("the master refused this worker: {}", e->message);
      return RunStatus::bad_input;
    }
    if (e->code == proto::ErrorCode::bad_message) {
      // The master does not know us (it restarted, or declared us dead): join again.
      reset_job();
      hello();
    }
  }
  return std::nullopt;
}

uint64_t Worker::declared_size(const std::string& hash) const {
  for (const proto::AssetRef& a : m_job.assets)
    if (a.hash == hash) return a.size;
  return 0;  // only missing hashes of the job are stored, so this is not reached
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
    if (const std::optional<uint64_t> ping = m_link.ping_due(t, interval)) {
      send(proto::Heartbeat{*ping, true});
      // A request the master could not serve is forgotten: ask again while we have room.
      if (m_state == State::working && t - m_last_request >= interval) request_work();
    }
    // Files on their way hold up the master's heartbeats: wait for them (fetch_patience.h).
    const double patience = m_state == State::fetching ? proto::fetch_patience(m_job.assets, m_missing) : 0.0;
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

}  // namespace

RunStatus run_worker(const WorkerOptions& options) {
  std::optional<security::CurveClient> curve = options.curve;
  std::string fallback_key;
  if (options.launched) {
    try {
      security::WorkerLaunchSecrets secrets = security::read_launch_secrets(STDIN_FILENO);
      curve = std::move(secrets.keys);
      fallback_key = std::move(secrets.fallback_key);
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
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
    return Worker(options, std::move(curve), std::move(fallback_key)).run();
  } catch (const std::exception& e) {
    spdlog::error("worker failed: {}", e.what());
    return RunStatus::failure;
  }
}

}  // namespace farm
