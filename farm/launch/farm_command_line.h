// The command line of a farm worker or relay that a launcher starts: built here once for every
// way of starting one (a local worker, ssh, srun), so the launchers cannot drift apart in what
// they pass (one give-up time, --cache wherever a cache folder is known).
#pragma once

#include <string>
#include <vector>

namespace farm {

// How long a launched worker or relay waits for its master before it gives up (--give-up-after):
// long enough for a master's restart to be met, short enough that nothing lingers for long.
inline constexpr char k_launched_give_up_seconds[] = "60";

struct FarmCommandLine {
  enum class Role { worker, relay };
  Role role = Role::worker;
  bool launched = true;     // --launched: its keys come on standard input, which is also its lifeline
  std::string connect;      // the master's (or a relay's) endpoint
  std::string bind;         // a relay's site endpoint
  std::string name;         // empty: the worker names itself HOST-PID
  int threads = 0;          // 0: its machine's cores
  int prefetch = -1;        // -1: its own default
  std::string cache_dir;    // empty: its own default
  std::string fallback;     // a worker behind a relay: the master to join if the relay dies
  bool no_sandbox = false;  // renderers run unconfined (the job's --no-sandbox)

  // Every word, `program` first (for exec or srun).
  std::vector<std::string> words(const std::string& program) const;
};

// The words as one command for a remote shell (ssh): `exec` and each word quoted.
std::string remote_shell_command(const std::vector<std::string>& words);

}  // namespace farm
