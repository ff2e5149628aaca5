// The worker's side of a job (worker_state.h): the welcome, fetching and verifying assets,
// loading the scene behind the backend seam, blocks in and results out, the messages of its master.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "assets/asset_manifest.h"
#include "protocol/pixel_codec.h"
#include "worker/worker_state.h"

namespace farm::worker_detail {

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
  m_fetch = JobFetch(m_cache, w.assets);
  spdlog::info("joined job {:x}: scene '{}', {} asset(s), {} to fetch", w.job_id, w.scene_name, w.assets.size(),
               m_fetch.missing().size());
  if (m_fetch.complete()) {
    start_loading();
  } else {
    m_state = State::fetching;
    send(m_fetch.request());
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
  if (std::optional<JobRefusal> refused = check_job_renderer(settings)) {
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
  const size_t pixels = out.rgba.size() / 4;
  const int carried = pixels ? static_cast<int>(out.carried.size() / pixels) : 0;
  std::vector<uint8_t> raw =
      proto::encode_pixels(out.rgba.data(), pixels, m_job.pixel_encoding, out.carried.data(), carried);
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
    if (m_state == State::fetching) {
      // Two failures with different culprits: content the master did not promise, or a cache
      // this machine cannot write (disk full): the latter is said as such, not blamed on it.
      Status error;
      switch (m_fetch.receive(*a, error)) {
        case JobFetch::Outcome::ignored: break;
        case JobFetch::Outcome::bad_asset:
          spdlog::error("bad asset from the master: {}", error.message());
          return RunStatus::failure;
        case JobFetch::Outcome::cannot_store:
          spdlog::error("cannot store an asset in this worker's cache: {}; the partial file was removed: make room in "
                        "'{}' or pass another --cache",
                        error.message(), m_cache.root());
          return RunStatus::failure;
        case JobFetch::Outcome::stored:
          if (m_fetch.complete()) start_loading();
          break;
      }
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

}  // namespace farm::worker_detail
