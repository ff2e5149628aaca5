// The worker's render threads: each takes one block at a time from a queue and renders it
// (a 4x4 block cannot keep many cores busy, so capacity comes from blocks in flight). Finished
// blocks are handed back through a callback that runs on the render thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend/block_renderer.h"
#include "scheduler/block.h"

namespace farm {

struct RenderTask {
  uint64_t attempt = 0;
  Block rect;
  double queued_at = 0;  // seconds on the worker's clock
};

struct RenderOutput {
  RenderTask task;
  bool cancelled = false;    // dropped without rendering (or rendered after a cancel, or failed)
  std::string failure;       // the renderer failed on it (not stopped on purpose): why, for the master
  std::vector<float> rgba;   // rect pixels, 4 floats each
  std::vector<float> carried; // rect pixels, the renderer's carried_floats() each
  double render_seconds = 0;
  double queued_seconds = 0;
  double fixed_seconds = 0;  // of render_seconds, what the renderer spends on any block (seconds_per_block)
  uint64_t rays = 0;
};

class RenderPool {
 public:
  using Done = std::function<void(RenderOutput&&)>;
  // `null_render`: return black pixels at once (benchmarks of the farm's own overhead).
  // `hang_after` >= 0 (tests only): the block started after that many hangs its thread until
  // it is cancelled or the pool stops, as a render stuck in a driver or a deadlock would.
  RenderPool(BlockRenderer& renderer, int threads, Done done, bool null_render = false, int hang_after = -1);
  ~RenderPool();
  RenderPool(const RenderPool&) = delete;
  RenderPool& operator=(const RenderPool&) = delete;

  void submit(const RenderTask& task);
  void cancel(uint64_t attempt);
  size_t in_flight() const;  // queued + rendering

 private:
  void loop();
  double now() const;

  BlockRenderer& m_renderer;
  Done m_done;
  bool m_null_render = false;
  int m_hang_after = -1;
  int m_started = 0;
  mutable std::mutex m_mutex;
  std::condition_variable m_cv;
  std::deque<RenderTask> m_queue;
  std::set<uint64_t> m_cancelled;
  std::map<uint64_t, Block> m_running;  // attempt -> block, of the renders in progress
  size_t m_rendering = 0;
  bool m_stopping = false;
  std::vector<std::thread> m_threads;
};

}  // namespace farm
