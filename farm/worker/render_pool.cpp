#include "worker/render_pool.h"

#include "backend/renderer_process.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace farm {

RenderPool::RenderPool(BlockRenderer& renderer, int threads, Done done, bool null_render, int hang_after)
    : m_renderer(renderer), m_done(std::move(done)), m_null_render(null_render), m_hang_after(hang_after) {
  for (int i = 0; i < threads; ++i) m_threads.emplace_back([this] { loop(); });
}

RenderPool::~RenderPool() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stopping = true;
    m_queue.clear();
  }
  m_cv.notify_all();
  m_renderer.interrupt_all();  // a renderer process that hangs must not hang the join
  for (std::thread& t : m_threads) t.join();
}

double RenderPool::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void RenderPool::submit(const RenderTask& task) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    RenderTask t = task;
    t.queued_at = now();
    m_queue.push_back(t);
  }
  m_cv.notify_one();
}

void RenderPool::cancel(uint64_t attempt) {
  std::optional<Block> running;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_cancelled.insert(attempt);
    if (auto it = m_running.find(attempt); it != m_running.end()) running = it->second;
  }
  m_cv.notify_all();  // a hung test block waits for its cancel
  // Its result is not wanted: a renderer process stuck on it is stopped, freeing the thread.
  if (running) m_renderer.interrupt(*running);
}

size_t RenderPool::in_flight() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_queue.size() + m_rendering;
}

void RenderPool::loop() {
  for (;;) {
    RenderTask task;
    bool cancelled;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
      if (m_stopping) return;
      task = m_queue.front();
      m_queue.pop_front();
      cancelled = m_cancelled.erase(task.attempt) > 0;
      ++m_rendering;
      m_running[task.attempt] = task.rect;
      if (m_hang_after >= 0 && m_started++ == m_hang_after) {
        m_cv.wait(lock, [&] { return m_stopping || m_cancelled.count(task.attempt) > 0; });
        cancelled = true;
      }
    }
    RenderOutput out;
    out.task = task;
    out.queued_seconds = now() - task.queued_at;
    if (!cancelled && m_null_render) {
      out.rgba.assign(static_cast<size_t>(task.rect.pixels()) * 4, 0.0f);
      out.carried.assign(static_cast<size_t>(task.rect.pixels()) * m_renderer.carried_floats(), 0.0f);
    } else if (!cancelled) {
      try {
        out.rgba.resize(static_cast<size_t>(task.rect.pixels()) * 4);
        out.carried.resize(static_cast<size_t>(task.rect.pixels()) * m_renderer.carried_floats());
        double t0 = now();
        out.rays = m_renderer.render(task.rect, out.rgba.data(), out.carried.empty() ? nullptr : out.carried.data());
        out.render_seconds = now() - t0;
        out.fixed_seconds = std::min(out.render_seconds, m_renderer.seconds_per_block());
      } catch (const std::exception& e) {
        // Cancelled meanwhile, the pool stopping (the job is over) or the worker stopping (a
        // signal: its renderers are all killed): stopped on purpose, no failure of the block.
        bool unwanted = renderers_stopping();
        {
          std::lock_guard<std::mutex> lock(m_mutex);
          unwanted = unwanted || m_stopping || m_cancelled.count(task.attempt) > 0;
        }
        if (unwanted) {
          spdlog::info("block {}x{} at {},{} of frame {} stopped: {}", task.rect.width, task.rect.height, task.rect.x,
                        task.rect.y, task.rect.frame, e.what());
        } else {
          spdlog::warn("block {}x{} at {},{} of frame {} failed: {}", task.rect.width, task.rect.height, task.rect.x,
                       task.rect.y, task.rect.frame, e.what());
          out.failure = e.what();  // the master is told, and gives the block back at once
        }
        cancelled = true;  // never send a partial block
      }
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      // A cancel that arrived while rendering still saves the bandwidth of sending it.
      out.cancelled = cancelled || m_cancelled.erase(task.attempt) > 0;
      --m_rendering;
      m_running.erase(task.attempt);
    }
    m_done(std::move(out));
  }
}

}  // namespace farm
