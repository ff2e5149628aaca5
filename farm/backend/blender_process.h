// One `blender -b SCENE.blend` process running the farm's bridge (blender_bridge.py, built into
// the binary): it loads the scene once and renders border regions on request, so a block costs
// Blender's render of it, not its start-up and scene load (docs/blender.md). Requests go down
// its stdin, one line each; replies come back on its file descriptor 3, one line each.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "backend/sandbox.h"

namespace farm {

class BlenderProcess {
 public:
  // Starts Blender on `scene_path` with the bridge's arguments (--pixels, --threads, overrides)
  // and waits until the scene is loaded. A scene Blender cannot read or set up throws
  // rt::SceneError with Blender's words; no `blender` on PATH throws std::runtime_error, as
  // does a load or a later request that takes longer than `limits` allow. Blender runs confined
  // (sandbox.h): the .blend's folder read-only, its scratch folder (scratch()) writable.
  BlenderProcess(const std::string& scene_path, const std::vector<std::string>& bridge_args,
                 const RendererLimits& limits = {});
  ~BlenderProcess();  // closes its stdin (the bridge then returns) and reaps it; kills it if it lingers
  BlenderProcess(const BlenderProcess&) = delete;
  BlenderProcess& operator=(const BlenderProcess&) = delete;

  // Sends one request line and returns the reply line without its newline. A process that died
  // (crashed, killed) throws std::runtime_error and is not alive() any more.
  std::string request(const std::string& line);
  bool alive() const { return m_pid > 0; }
  // From another thread: makes a request in progress (or the next) fail at once, as if Blender
  // had died; the process is then killed and reaped by the thread that made the request.
  void interrupt();
  // Interrupted at some point: its socket is shut, so it can serve no further request even if the
  // request in progress was answered before the interrupt landed.
  bool interrupted() const { return m_interrupted; }
  pid_t pid() const { return m_pid; }
  // The one folder it may write (its block images go here); removed with it.
  const std::string& scratch() const { return m_scratch->path(); }

 private:
  std::string read_line(int timeout_ms);
  std::string died(const std::string& doing);  // reaps the process; says how it ended

  std::unique_ptr<ScratchFolder> m_scratch;
  RendererLimits m_limits;
  pid_t m_pid = -1;
  int m_to = -1, m_from = -1;
  std::string m_log;  // Blender's output until the scene is loaded (its errors), then removed
  std::string m_pending;
  std::atomic<bool> m_interrupted{false};
};

}  // namespace farm
