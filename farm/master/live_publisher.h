// Feeds the live view (`--http`, farm/live) from the master's loop: each accepted block's
// pixels into the live image at once, and a LiveStatus built from the job controller at most
// every `interval` seconds (and at the end). Only the loop calls it; the web server reads what
// it publishes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "control/job_controller.h"
#include "live/live_server.h"
#include "protocol/protocol.h"

namespace farm {

class LivePublisher {
 public:
  // Feeds `view`, which a server of someone else's shows (the farm service's page).
  LivePublisher(LiveView& view, std::string scene, int frame_shown, int frames, proto::PixelEncoding encoding,
                double interval = 0.25);
  // `--http ADDR:PORT`: starts the web server (owned by the publisher) for a width x height job.
  // An address other machines can reach needs `token`; `also_hosts` are Host names it answers to
  // besides its address and this machine's names (LiveServerOptions::also_hosts). Throws std::invalid_argument naming what
  // is wrong, or what the server throws when it cannot listen.
  static std::unique_ptr<LivePublisher> start(const std::string& http, const std::string& token, std::string scene,
                                              int width, int height, int frame_shown, int frames,
                                              proto::PixelEncoding encoding,
                                              const std::vector<std::string>& also_hosts = {});
  // The URL of the server start() made ("" for a view shown by someone else's).
  std::string url() const { return m_owned ? m_owned->url() : ""; }

  // The accepted block's decoded pixels, in the wire encoding (as FrameStore::place takes them).
  void block_accepted(const Block& block, WorkerId worker, const std::vector<uint8_t>& pixels);
  void maybe_publish(double now, const JobController& job);
  // A worker that cannot take part in this job (its renderer is missing or another version).
  void worker_sits_out(WorkerId worker, const std::string& reason) { m_sitting_out[worker] = reason; }
  // The job ended: `outcome` ("complete", "failed: ...") and a closing summary of its blocks.
  void finish(double now, const JobController& job, const std::string& outcome);
  // Keeps the final state served for `seconds` more (--http-linger), unless `stop` turns true.
  void linger(double seconds, const std::atomic<bool>* stop) const;

  // The status as the page would show it now (also what publish sends).
  LiveStatus status_of(double now, const JobController& job) const;

 private:
  std::unique_ptr<LiveServer> m_owned;  // from start()
  LiveView& m_view;
  std::string m_scene;
  int m_frame_shown, m_frames;
  proto::PixelEncoding m_encoding;
  double m_interval;
  double m_last = -1e9;
  std::vector<LiveTile> m_tiles;
  std::map<WorkerId, std::string> m_sitting_out;
};

}  // namespace farm
