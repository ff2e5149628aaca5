// Feeds the live view (`--http`, farm/live) from the master's loop: each accepted block's
// pixels into the live image at once, and a LiveStatus built from the job controller at most
// every `interval` seconds (and at the end). Only the loop calls it; the web server reads what
// it publishes.
#pragma once

#include <string>
#include <vector>

#include "control/job_controller.h"
#include "live/live_server.h"
#include "protocol/protocol.h"

namespace farm {

class LivePublisher {
 public:
  LivePublisher(LiveServer& server, std::string scene, int frame_shown, int frames, proto::PixelEncoding encoding,
                double interval = 0.25);

  // The accepted block's decoded pixels, in the wire encoding (as FrameStore::place takes them).
  void block_accepted(const Block& block, WorkerId worker, const std::vector<uint8_t>& pixels);
  void maybe_publish(double now, const JobController& job);
  // The job ended: `outcome` ("complete", "failed: ...") and the closing summary lines.
  void finish(double now, const JobController& job, const std::string& outcome, const std::vector<std::string>& lines);

  // The status as the page would show it now (also what publish sends).
  LiveStatus status_of(double now, const JobController& job) const;

 private:
  LiveServer& m_server;
  std::string m_scene;
  int m_frame_shown, m_frames;
  proto::PixelEncoding m_encoding;
  double m_interval;
  double m_last = -1e9;
  std::vector<LiveTile> m_tiles;
};

}  // namespace farm
