#include "backend/running_processes.h"

#include "backend/renderer_process.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>

namespace farm {

namespace {

bool same_block(const Block& a, const Block& b) {
  return a.frame == b.frame && a.x == b.x && a.y == b.y && a.width == b.width && a.height == b.height;
}

}  // namespace

void RunningProcesses::add(pid_t pid, const Block& block) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_running.push_back({pid, block});
}

std::optional<int> RunningProcesses::wait(pid_t pid, double seconds) {
  // Waited for without reaping: until it is forgotten below, its pid cannot be reused.
  const bool ended = await_renderer(pid, seconds);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_running.erase(std::remove_if(m_running.begin(), m_running.end(), [&](const Entry& e) { return e.pid == pid; }),
                    m_running.end());
  }
  const int status = reap_renderer(pid);
  if (!ended) return std::nullopt;
  return status;
}

void RunningProcesses::kill(const Block& block) {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (const Entry& e : m_running) {
    if (same_block(e.block, block)) kill_renderer(e.pid);
  }
}

void RunningProcesses::kill_all() {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (const Entry& e : m_running) kill_renderer(e.pid);
}

}  // namespace farm
