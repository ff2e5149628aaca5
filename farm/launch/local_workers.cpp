#include "launch/local_workers.h"

#include <spdlog/spdlog.h>

#include <exception>

#include "launch/farm_command_line.h"

namespace farm {

void LocalWorkers::start(const std::string& endpoint) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_started = true;
  for (int i = 0; i < m_settings.count; ++i) {
    FarmCommandLine command;
    command.launched = false;  // loopback, no keys
    command.connect = endpoint;
    command.name = "local-" + std::to_string(i + 1);
    command.threads = m_settings.threads;
    command.prefetch = m_settings.prefetch;
    command.no_sandbox = m_settings.no_sandbox;
    try {
      m_workers.push_back(std::make_unique<ChildProcess>(command.words(m_settings.self_exe), "", command.name));
    } catch (const std::exception& e) {
      spdlog::error("cannot start local worker {}: {}", command.name, e.what());
    }
  }
}

std::string LocalWorkers::all_exited() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_started) return {};
  if (m_workers.empty()) return "no local worker could be started";
  for (auto& w : m_workers)
    if (!w->poll()) return {};
  return "every local worker has exited (see their messages above)";
}

void LocalWorkers::stop() {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<ChildProcess*> children;
  for (auto& w : m_workers) children.push_back(w.get());
  stop_children(children, 1.0, 10.0);
}

}  // namespace farm
