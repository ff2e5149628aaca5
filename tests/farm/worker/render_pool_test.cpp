// The worker's render threads (worker/render_pool.h) with a scripted renderer: results, cancels
// before and during a render, a renderer that fails, and a hung render stopped at shutdown.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "worker/render_pool.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// Fills a block with its x coordinate; a block at x == fail_x throws; one at x == block_x waits
// until interrupted (as a renderer process that hangs until the worker stops it).
class ScriptedRenderer : public BlockRenderer {
 public:
  int fail_x = -1, block_x = -1;
  std::atomic<int> rendered{0}, interrupts{0};

  uint64_t render(const Block& b, float* rgba, float* /*carried*/) override {
    if (b.x == fail_x) throw std::runtime_error("renderer crashed on purpose");
    if (b.x == block_x) {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_waiting = true;
      m_cv.notify_all();
      m_cv.wait(lock, [&] { return m_interrupted; });
      throw std::runtime_error("interrupted");
    }
    for (int64_t i = 0; i < b.pixels() * 4; ++i) rgba[i] = static_cast<float>(b.x);
    ++rendered;
    return static_cast<uint64_t>(b.pixels());
  }
  void interrupt(const Block&) override { stop(); }
  void interrupt_all() override { stop(); }
  double seconds_per_block() const override { return 1e9; }  // capped at the render's own time

  void wait_until_blocked() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_waiting; });
  }

 private:
  void stop() {
    ++interrupts;
    std::lock_guard<std::mutex> lock(m_mutex);
    m_interrupted = true;
    m_cv.notify_all();
  }
  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_waiting = false, m_interrupted = false;
};

struct Outputs {
  std::mutex mutex;
  std::condition_variable cv;
  std::map<uint64_t, RenderOutput> by_attempt;

  RenderPool::Done callback() {
    return [this](RenderOutput&& out) {
      std::lock_guard<std::mutex> lock(mutex);
      by_attempt[out.task.attempt] = std::move(out);
      cv.notify_all();
    };
  }
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(mutex);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return by_attempt.size() >= n; });
  }
};

RenderTask task(uint64_t attempt, int x) { return RenderTask{attempt, Block{1, x, 0, 4, 2}, 0}; }

}  // namespace

TEST_CASE("render pool: every block comes back once, rendered, with its timing and rays") {
  ScriptedRenderer r;
  Outputs outs;
  {
    RenderPool pool(r, 3, outs.callback());
    for (uint64_t a = 1; a <= 20; ++a) pool.submit(task(a, static_cast<int>(a)));
    REQUIRE(outs.wait_for(20));
  }
  CHECK(outs.by_attempt.size() == 20);
  for (const auto& entry : outs.by_attempt) {
    const auto attempt = entry.first;  // not a structured binding: CAPTURE's lambda takes it (C++17)
    const auto& out = entry.second;
    CAPTURE(attempt);
    CHECK_FALSE(out.cancelled);
    CHECK(out.failure.empty());
    REQUIRE(out.rgba.size() == 4 * 2 * 4);
    CHECK(out.rgba.front() == static_cast<float>(attempt));
    CHECK(out.rays == 8);
    CHECK(out.render_seconds >= 0);
    CHECK(out.fixed_seconds <= out.render_seconds);  // never more than the render took
  }
}

TEST_CASE("render pool: a failing renderer reports why, a cancelled block is dropped, neither sends pixels") {
  ScriptedRenderer r;
  r.fail_x = 7;
  Outputs outs;
  {
    RenderPool pool(r, 1, outs.callback());
    pool.cancel(2);  // cancelled before it is even queued: dropped without rendering
    pool.submit(task(1, 7));
    pool.submit(task(2, 8));
    pool.submit(task(3, 9));
    REQUIRE(outs.wait_for(3));
  }
  const RenderOutput& failed = outs.by_attempt.at(1);
  CHECK(failed.cancelled);  // no partial block goes to the master
  CHECK(failed.failure == "renderer crashed on purpose");
  const RenderOutput& dropped = outs.by_attempt.at(2);
  CHECK(dropped.cancelled);
  CHECK(dropped.failure.empty());  // stopped on purpose, not a failure to report
  CHECK_FALSE(outs.by_attempt.at(3).cancelled);
  CHECK(r.rendered == 1);
}

TEST_CASE("render pool: a cancel stops the renderer stuck on that block, and shutdown never waits on a hang") {
  ScriptedRenderer r;
  r.block_x = 5;
  Outputs outs;
  {
    RenderPool pool(r, 2, outs.callback());
    pool.submit(task(1, 5));
    r.wait_until_blocked();
    CHECK(pool.in_flight() == 1);
    pool.cancel(1);  // the block is no longer wanted: its render is interrupted
    REQUIRE(outs.wait_for(1));
    CHECK(outs.by_attempt.at(1).cancelled);
    CHECK(outs.by_attempt.at(1).failure.empty());  // interrupted on purpose: not reported as failed
    CHECK(r.interrupts >= 1);
  }
  // A second pool whose renderer hangs until the pool is destroyed.
  ScriptedRenderer hung;
  hung.block_x = 3;
  Outputs more;
  auto pool = std::make_unique<RenderPool>(hung, 1, more.callback());
  pool->submit(task(9, 3));
  hung.wait_until_blocked();
  const auto t0 = std::chrono::steady_clock::now();
  pool.reset();  // interrupt_all, then join
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(hung.interrupts >= 1);
}

TEST_SUITE_END();
