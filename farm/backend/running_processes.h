// The renderer processes a worker has running, by the block each renders, so that a render whose
// result is no longer wanted (the block was committed by another worker, or the job ended) can be
// stopped: a renderer that hangs mid-block costs that block, not a render thread for ever.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <vector>

#include "scheduler/block.h"

namespace farm {

class RunningProcesses {
 public:
  void add(pid_t pid, const Block& block);
  // Waits for `pid` to end and reaps it, forgetting it first (so a kill never reaches a reused
  // pid); returns its wait status. With `seconds` > 0, one still running then is killed and
  // reaped, and nullopt returned.
  std::optional<int> wait(pid_t pid, double seconds = 0);
  void kill(const Block& block);  // SIGKILL to the process group of every process rendering exactly `block`
  void kill_all();

 private:
  struct Entry {
    pid_t pid;
    Block block;
  };
  std::mutex m_mutex;
  std::vector<Entry> m_running;
};

}  // namespace farm
