// What the live view (`--http`) shows of a running job: a copy the master's loop publishes now
// and then, so the web server never touches the scheduler or the statistics themselves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace farm {

struct LiveWorker {
  uint32_t id = 0;
  std::string name;      // as the worker named itself (often user@host)
  std::string host;      // the part after '@', or the name
  int threads = 1;
  int site_workers = 0;  // > 0: a relay (farm relay), with this many workers at its site
  std::string state;     // "rendering", "idle", "sitting out", "joining", "left", "dead"
  std::string reason;    // why it sits the job out (its renderer is missing or another version)
  uint64_t blocks = 0, pixels = 0;
  double mrays_per_second = 0;  // its accepted rays over its busy render time
  int block_size = 0;           // the side of its next block
  double wait_seconds = 0;      // the policy's waiting time for it (0: none)
  double rtt_ms = 0;            // measured round trip (0: not yet)
  double bandwidth_mbit = 0;    // measured (0: not yet)
};

// One accepted block, for the outline overlay.
struct LiveTile {
  int frame = 1, x = 0, y = 0, width = 0, height = 0;
  uint32_t worker = 0;
};

struct LiveDecision {
  double at = 0;  // seconds since the job started
  std::string text;
};

struct LiveStatus {
  std::string scene;
  int width = 0, height = 0, frames = 1, frame_shown = 1;
  std::string policy;
  double elapsed_seconds = 0;
  double eta_seconds = -1;  // -1: unknown
  uint64_t pixels_done = 0, pixels_total = 0;
  uint64_t blocks_done = 0, blocks_outstanding = 0;
  uint64_t reassignments = 0, halvings = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  bool finished = false;
  std::string outcome;  // when finished: "complete", "failed: ..."
  std::vector<LiveWorker> workers;
  std::vector<LiveTile> tiles;            // accepted blocks of frame_shown
  std::vector<LiveDecision> decisions;    // the latest, oldest first
  std::vector<std::string> final_lines;   // the end-of-run summary, once finished
};

}  // namespace farm
