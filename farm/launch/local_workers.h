// `farm render`'s own workers on this machine (no --hosts, no --slurm): `count` processes of this
// farm executable running `farm worker` against the master's loopback endpoint, each with the
// same command line a launcher gives (FarmCommandLine) and the same life as a launched one
// (ChildProcess: it dies with the master, even on SIGKILL, and its lines are echoed labelled
// with its name).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "launch/child_process.h"

namespace farm {

struct LocalWorkerSettings {
  std::string self_exe;  // this farm executable
  int count = 1;
  int threads = 0;       // per worker; 0: its machine's cores
  int prefetch = -1;     // -1: the worker's default
  bool no_sandbox = false;
};

class LocalWorkers {
 public:
  explicit LocalWorkers(LocalWorkerSettings settings) : m_settings(std::move(settings)) {}
  ~LocalWorkers() { stop(); }
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  // Starts them against `endpoint` (the master's, once it listens), named local-1, local-2...
  // One that cannot be started is reported; the others still start.
  void start(const std::string& endpoint);
  // Non-empty once every started worker has exited: nobody is left to finish the job.
  std::string all_exited();
  // After the job: a moment to exit by themselves (they do after JobDone), then SIGTERM (a
  // worker ends its renderers and removes its scratch and job folders), then SIGKILL.
  void stop();

 private:
  LocalWorkerSettings m_settings;
  std::mutex m_mutex;  // start() runs in the master's bound callback, all_exited() in its loop
  std::vector<std::unique_ptr<ChildProcess>> m_workers;
  bool m_started = false;
};

}  // namespace farm
