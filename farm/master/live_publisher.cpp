#include "master/live_publisher.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace farm {

LivePublisher::LivePublisher(LiveView& view, std::string scene, int frame_shown, int frames,
                             proto::PixelEncoding encoding, double interval)
    : m_view(view), m_scene(std::move(scene)), m_frame_shown(frame_shown), m_frames(frames), m_encoding(encoding),
      m_interval(interval) {}

void LivePublisher::block_accepted(const Block& b, WorkerId worker, const std::vector<uint8_t>& pixels) {
  if (b.frame != m_frame_shown) return;
  const size_t n = static_cast<size_t>(b.pixels());
  if (m_encoding == proto::PixelEncoding::srgb8) {
    if (pixels.size() < n * 3) return;
    m_view.image().place_rgb8(b.x, b.y, b.width, b.height, pixels.data());
  } else {
    // Each pixel's colour, then its passes (pixel_codec.h): the view shows the colour.
    const size_t bpp = n ? pixels.size() / n : 0;
    if (bpp < 12) return;
    std::vector<float> rgb(n * 3);
    for (size_t i = 0; i < n; ++i) std::memcpy(&rgb[3 * i], &pixels[bpp * i], 12);
    m_view.image().place_float_rgb(b.x, b.y, b.width, b.height, rgb.data());
  }
  m_tiles.push_back(LiveTile{b.frame, b.x, b.y, b.width, b.height, worker});
}

LiveStatus LivePublisher::status_of(double now, const JobController& job) const {
  const Scheduler& s = job.scheduler();
  const RunStats& stats = job.stats();
  LiveStatus st;
  st.scene = m_scene;
  st.width = s.config().width;
  st.height = s.config().height;
  st.frames = m_frames;
  st.frame_shown = m_frame_shown;
  st.policy = s.policy().name();
  st.elapsed_seconds = now;
  st.pixels_done = static_cast<uint64_t>(std::max<int64_t>(0, s.completed_pixels()));
  st.pixels_total = static_cast<uint64_t>(std::max<int64_t>(0, s.total_pixels()));
  st.blocks_done = s.completed_blocks();
  st.blocks_outstanding = s.outstanding_blocks();
  st.reassignments = s.reassignments();
  for (const PolicyDecision& d : s.decisions()) st.halvings += d.to_size < d.from_size;
  // ETA from the rate so far (restored blocks excluded: they took no time in this run).
  const uint64_t restored = s.restored_blocks();
  if (st.pixels_done > 0 && st.pixels_done < st.pixels_total && now > 0 && s.completed_blocks() > restored) {
    const double rate = static_cast<double>(st.pixels_done) / now;
    st.eta_seconds = static_cast<double>(st.pixels_total - st.pixels_done) / rate;
  }
  for (const auto& [id, w] : stats.workers()) {
    LiveWorker lw;
    lw.id = id;
    lw.name = w.name;
    const size_t at = w.name.find('@');
    lw.host = at == std::string::npos ? w.name : w.name.substr(at + 1);
    lw.threads = w.threads;
    lw.site_workers = w.site_workers;
    lw.blocks = w.blocks;
    lw.pixels = w.pixels;
    st.bytes_in += w.bytes_in;
    st.bytes_out += w.bytes_out;
    if (w.busy_seconds > 0) lw.mrays_per_second = static_cast<double>(w.rays) / w.busy_seconds / 1e6;
    if (w.left >= 0) {
      lw.state = w.died ? "dead" : "left";
    } else if (auto out = m_sitting_out.find(id); out != m_sitting_out.end()) {
      lw.state = "sitting out";
      lw.reason = out->second;
    } else if (s.has_worker(id)) {
      lw.state = s.attempts_of(id).empty() ? "idle" : "rendering";
      lw.block_size = s.block_size_of(id);
      lw.wait_seconds = s.wait_of(id);
      lw.rtt_ms = job.rtt_of(id) * 1000.0;
      lw.bandwidth_mbit = job.bandwidth_of(id) * 8.0 / 1e6;
    } else {
      lw.state = "joining";
    }
    st.workers.push_back(lw);
  }
  st.tiles = m_tiles;
  const auto& decisions = s.decisions();
  const size_t first = decisions.size() > 20 ? decisions.size() - 20 : 0;
  for (size_t i = first; i < decisions.size(); ++i) {
    const PolicyDecision& d = decisions[i];
    st.decisions.push_back({d.time, "worker " + std::to_string(d.worker) + ": block " + std::to_string(d.from_size) +
                                        " -> " + std::to_string(d.to_size) + " (" + d.reason + ")"});
  }
  return st;
}

void LivePublisher::maybe_publish(double now, const JobController& job) {
  if (now - m_last < m_interval) return;
  m_last = now;
  m_view.publish(status_of(now, job));
}

void LivePublisher::finish(double now, const JobController& job, const std::string& outcome) {
  const Scheduler& s = job.scheduler();
  LiveStatus st = status_of(now, job);
  st.finished = true;
  st.outcome = outcome;
  st.eta_seconds = -1;
  st.final_lines = {"blocks " + std::to_string(s.completed_blocks()) + ", reassigned " +
                    std::to_string(s.reassignments()) + ", late results " + std::to_string(s.late_results())};
  m_view.publish(std::move(st));
}

std::unique_ptr<LivePublisher> LivePublisher::start(const std::string& http, const std::string& token,
                                                    std::string scene, int width, int height, int frame_shown,
                                                    int frames, proto::PixelEncoding encoding,
                                                    const std::vector<std::string>& also_hosts) {
  LiveServerOptions o = parse_http_address(http);
  o.token = token;
  o.also_hosts = also_hosts;
  if (!is_loopback_address(o.address) && o.token.empty())
    throw std::invalid_argument("--http " + http + " is reachable from other machines: give --http-token");
  auto server = std::make_unique<LiveServer>(o, width, height);
  auto publisher = std::make_unique<LivePublisher>(server->view(), std::move(scene), frame_shown, frames, encoding);
  publisher->m_owned = std::move(server);
  return publisher;
}

void LivePublisher::linger(double seconds, const std::atomic<bool>* stop) const {
  if (seconds <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until && !(stop && stop->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

}  // namespace farm
