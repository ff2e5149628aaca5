// Starts the workers of one job on other machines and makes sure none outlives it: one
// `ssh HOST farm worker ...` per host line, or one `srun ... farm worker ...` step over a Slurm
// allocation's tasks. Each worker gets its keys on standard input (security/launch_secrets.h)
// and keeps that channel as a lifeline. A host that cannot run a worker is reported once, with
// the reason (ssh error, missing binary, refused version), and the job goes on with the others.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "launch/child_process.h"
#include "launch/host_file.h"
#include "security/curve_keys.h"
#include "security/socket_security.h"

namespace farm {

struct LaunchTarget {
  std::string endpoint;    // what the workers connect to: tcp://ADDRESS:PORT
  std::string master_key;  // Z85 public key of the master, pinned by the workers
  std::string self_exe;    // this farm binary: the default `farm` path on the hosts
};

class WorkerLauncher {
 public:
  // One ssh per host; `ssh_command` is split at spaces (as rsync -e), BatchMode is always on.
  // `keys[i]` is host i's key pair (public, secret).
  void start_ssh(const std::vector<HostSpec>& hosts, const std::string& ssh_command, const LaunchTarget& target,
                 const std::vector<security::CurveKeyPair>& keys);
  // One srun step with a task per allocated task (inside salloc/sbatch); all tasks share `key`.
  void start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key);

  // The master saw a worker of this name join or go away (for the progress counts).
  void worker_changed(const std::string& name, bool joined);
  // Reports every launch that ended since the last call, once. Returns false when none is left
  // running: nobody will render the job.
  bool check();
  // "hosts: 3 started, 2 joined, 1 lost"
  std::string progress() const;
  // The failures so far, one "label: reason" per line.
  std::string failures() const;
  // Closes every lifeline and ends every launch process (SIGTERM, then SIGKILL).
  void stop_all();

 private:
  struct Launch {
    std::string label;
    std::unique_ptr<ChildProcess> process;
    bool ended = false;
    int exit_code = 0;
    std::string reason;  // why it failed, "" if it did not
  };
  std::string reason_for(const Launch& l, int code) const;
  std::vector<Launch> m_launches;
  std::map<std::string, int> m_joined;  // worker name -> times it is in the job (0 = left)
  int m_lost = 0;
  int m_workers = 0;  // workers started: one per host, or the allocation's tasks
  bool m_slurm = false;
};

}  // namespace farm
