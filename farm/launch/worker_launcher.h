// Starts the workers of one job on other machines and makes sure none outlives it: one
// `ssh HOST farm worker ...` per host line, or one `srun ... farm worker ...` step over a Slurm
// allocation's tasks. Each worker gets its keys on standard input (security/launch_secrets.h)
// and keeps that channel as a lifeline. A host that cannot run a worker is reported once, with
// the reason (ssh error, missing binary, refused version), and the job goes on with the others.
#pragma once

#include <atomic>
#include <chrono>
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
  // `join_timeout`: an ssh whose worker has not joined this many seconds after the last host
  // was started is reported and ended (a host that accepts the connection and then says nothing).
  explicit WorkerLauncher(double join_timeout = 60) : m_join_timeout(join_timeout) {}

  // One ssh per host; `ssh` is the ssh command's words (ssh_words()), run without a shell;
  // BatchMode is always on. `keys[i]` is host i's key pair (public, secret). Starts no more
  // once `stop` is set.
  void start_ssh(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh, const LaunchTarget& target,
                 const std::vector<security::CurveKeyPair>& keys, const std::atomic<bool>* stop = nullptr);
  // One srun step with a task per allocated task (inside salloc/sbatch); all tasks share `key`.
  // `tasks` and `cpus_per_task`: SLURM_NTASKS and SLURM_CPUS_PER_TASK, checked (0 = unset).
  void start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key, int tasks, int cpus_per_task);

  // The master saw a worker of this name join or go away (for the progress counts).
  void worker_changed(const std::string& name, bool joined);
  // Reports every launch that ended since the last call, once. Returns false when none is left
  // running: nobody will render the job.
  bool check();
  // Workers of this job in it now (joined and not gone): they render on even when their
  // launch process has ended (a Slurm step whose srun is gone while a task still runs).
  int workers_in_job() const;
  // "hosts: 3 started, 2 joined, 1 lost"
  std::string progress() const;
  // Every host's fate, one "  label: what became of it" line each (the end-of-job summary);
  // then each worker that joined under another name (Slurm tasks, workers started by hand).
  std::string summary() const;
  // The failures so far, one "label: reason" per line.
  std::string failures() const;
  // Closes every lifeline and ends every launch process (SIGTERM, then SIGKILL).
  void stop_all();

 private:
  struct Launch {
    std::string label;
    std::string name;  // its worker's --name: the label, "label#2" for a host listed again
    std::unique_ptr<ChildProcess> process;
    std::chrono::steady_clock::time_point started;  // when all hosts had been started (--join-timeout)
    bool ended = false;
    int exit_code = 0;
    std::string reason;  // why it failed, "" if it did not
    bool joined = false; // its worker joined the job at some time
  };
  std::string reason_for(const Launch& l, int code) const;
  void give_up_on_silent(Launch& l);
  std::vector<Launch> m_launches;
  std::map<std::string, size_t> m_launch_of;  // worker name -> its launch (ssh only)
  double m_join_timeout;
  std::map<std::string, int> m_joined;  // worker name -> times it is in the job (0 = left)
  int m_lost = 0;
  int m_workers = 0;  // workers started: one per host, or the allocation's tasks
  bool m_slurm = false;
};

}  // namespace farm
