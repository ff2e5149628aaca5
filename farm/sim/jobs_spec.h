// The jobs of a shared farm for `farm sim --jobs FILE.toml` (simulate_jobs, sim/simulator.h):
// each [[job]] as `farm submit` would queue it, with when it arrives. Example:
//
//   [[job]]
//   name = "film"
//   cost_map = "film.costs"   # relative to this file's folder; default: the --cost-map
//   priority = 5              # higher first, -1000..1000 (as `farm submit --priority`)
//   submit = 0                # seconds after the simulation starts
//   work_factor = 4           # multiply its costs (e.g. its spp / the map's)
//   frames = 2                # default: the map's
//   policy = "fixed"          # its own block policy and block size (default: the command's)
//   block = 32
//   load_ms = 300             # a worker's scene load when it moves to this job (default: its startup)
//   setup_ms = 400            # the service's setup of it (scene read, preview) when first wanted
//   pause = 10                # paused at (seconds), resume = 20: resumed at
//   reprioritise_at = 15      # at this time its priority becomes new_priority
//   new_priority = 9
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler_types.h"

namespace farm {

struct JobEntrySpec {
  std::string name;
  std::string cost_map;   // a path, resolved against the file's folder; empty: the command's --cost-map
  int priority = 0;
  double submit = 0;
  double work_factor = 1;
  int frames = 0;         // 0: the cost map's
  std::optional<PolicyKind> policy;  // as `farm submit --policy`; none: the command's
  int block = 0;          // as `farm submit --block`; 0: the command's
  double load = -1;       // seconds; < 0: the worker's startup
  double setup = 0;       // seconds
  double pause = -1, resume = -1;
  double reprioritise_at = -1;
  int new_priority = 0;
};

struct JobsSpec {
  std::string file;
  std::vector<JobEntrySpec> jobs;
};


// Reads and checks a jobs file; errors are rt::SceneError at "file:line:column", naming the key.
// A cost map that is named must be a readable regular file.
JobsSpec read_jobs_spec(const std::string& path);
JobsSpec parse_jobs_spec(const std::string& text, const std::string& file);

}  // namespace farm
