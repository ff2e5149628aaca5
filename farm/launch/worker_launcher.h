// Starts the workers of one job on other machines and makes sure none outlives it: one
// `ssh HOST farm worker ...` per host line, or one `srun ... farm worker ...` step over a Slurm
// allocation's tasks. Each worker gets its keys on standard input (security/launch_secrets.h)
// and keeps that channel as a lifeline. A host that cannot run a worker is reported once, with
// the reason (ssh error, missing binary, refused version), and the job goes on with the others.
// Hosts of a site (`site=NAME`) go through a relay started on the site's first host
// (launch/site_relays.h, worker_launcher_relays.cpp); a site whose relay fails connects straight
// to the master. A Slurm allocation may have one relay too (--slurm-relay), on its first node.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launch/child_process.h"
#include "launch/host_file.h"
#include "launch/site_relays.h"
#include "security/curve_keys.h"
#include "security/socket_security.h"

namespace farm {

struct LaunchTarget {
  std::string endpoint;    // what the workers connect to: tcp://ADDRESS:PORT
  std::string master_key;  // Z85 public key of the master, pinned by the workers
  std::string self_exe;    // this farm binary: the default `farm` path on the hosts
};

// A site's relay as the command prepared it: the site and the relay's key pair, whose public key
// the master allows (the relay uses it towards its site's workers too).
struct SiteRelay {
  Site site;
  security::CurveKeyPair key;
};

class WorkerLauncher {
 public:
  // `join_timeout`: an ssh whose worker has not joined this many seconds after the last host
  // was started is reported and ended (a host that accepts the connection and then says nothing).
  explicit WorkerLauncher(double join_timeout = 60) : m_join_timeout(join_timeout) {}

  // One ssh per host; `ssh` is the ssh command's words (ssh_words()), run without a shell;
  // BatchMode is always on. `keys[i]` is host i's key pair (public, secret). Starts no more
  // once `stop` is set. With `relays`, first one more ssh per site for its relay on the site's
  // first host, all at once; then waits (--join-timeout at most, less on `stop`) for each to say
  // where it listens, and starts the site's workers against it, or against the master if it
  // failed (reported once).
  void start_ssh(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh, const LaunchTarget& target,
                 const std::vector<security::CurveKeyPair>& keys, const std::vector<SiteRelay>& relays = {},
                 const std::atomic<bool>* stop = nullptr);
  // One srun step with a task per allocated task (inside salloc/sbatch); all tasks share `key`.
  // `tasks` and `cpus_per_task`: SLURM_NTASKS and SLURM_CPUS_PER_TASK, checked (0 = unset).
  // With `relay` (the relay's key pair, which the master allows): first a one-task step on the
  // allocation's first node running a relay that admits `key`, then the wait (--join-timeout at
  // most, less on `stop`) for it to say on which host and port it listens; the worker step
  // connects to it, or to the master if it failed (reported once). Interrupted while waiting: no
  // worker step.
  void start_slurm(const LaunchTarget& target, const security::CurveKeyPair& key, int tasks, int cpus_per_task,
                   const std::optional<security::CurveKeyPair>& relay = std::nullopt,
                   const std::atomic<bool>* stop = nullptr);

  // The master saw a worker (or a relay) of this name join or go away (for the progress counts).
  void worker_changed(const std::string& name, bool joined);
  // Reports every launch that ended since the last call, once, and takes in what the relays
  // said of their site workers. Returns false when no worker is left running (a relay alone
  // renders nothing; workers whose relay ended join the master): nobody will render the job.
  bool check();
  // Workers of this job in it now (joined the master or a relay, and not gone): they render on
  // even when their launch process has ended (a Slurm step whose srun is gone while a task still
  // runs). Relays are not counted.
  int workers_in_job() const;
  // "hosts: 3 started, 2 joined, 1 lost"; "hosts: 5 started, 2 relays, 5 joined, 0 lost" with
  // relays (those started; a relay that failed is counted among the failed too).
  std::string progress() const;
  // Every host's fate, one "  label: what became of it" line each (the end-of-job summary);
  // then each worker that joined under another name (Slurm tasks, workers started by hand).
  std::string summary() const;
  // The failures so far, one "label: reason" per line.
  std::string failures() const;
  // Closes every lifeline and ends every launch process, relays too (SIGTERM, then SIGKILL).
  void stop_all();

 private:
  struct Launch {
    std::string label;
    std::string name;  // its worker's --name: the label, "label#2" for a host listed again; a relay's
    std::unique_ptr<ChildProcess> process;
    std::chrono::steady_clock::time_point started;  // when all hosts had been started (--join-timeout)
    bool ended = false;
    int exit_code = 0;
    std::string reason;  // why it failed, "" if it did not
    bool joined = false;            // its worker (or relay) joined the job at some time
    bool relay = false;             // a site's relay, not a worker
    std::string site;               // a relay's site, or the site of a worker that goes through a relay
    HostSpec host;                  // a relay: its host (a Slurm step's: the one it reports)
    std::string public_key;         // a relay: its public key, pinned by its site's workers
    std::string endpoint;           // a relay: where its site's workers reach it, once it said so
    int via = -1;                   // a worker: its relay's launch, -1 = straight to the master
    std::set<std::string> members;  // a relay: the site workers in it now, by name
    std::set<std::string> seen;     // a relay: every site worker that joined it
  };
  // The ssh command line that runs `remote` on `h`.
  static std::vector<std::string> ssh_argv(const std::vector<std::string>& ssh, const HostSpec& h,
                                           const std::string& remote);
  // Starts `l`'s process (a failure to start it is recorded and reported) and keeps it.
  void start_launch(Launch l, const std::vector<std::string>& argv, const std::string& secrets,
                    const std::string& stdout_marker = "");
  // worker_launcher_relays.cpp: the relays' side.
  void start_relays(const std::vector<HostSpec>& hosts, const std::vector<std::string>& ssh, const LaunchTarget& target,
                    const std::vector<security::CurveKeyPair>& keys, const std::vector<SiteRelay>& relays,
                    const std::set<std::string>& worker_names);
  // The Slurm allocation's relay step (--slurm-relay), admitting the tasks' key `worker_key`.
  void start_slurm_relay(const LaunchTarget& target, const std::string& worker_key,
                         const security::CurveKeyPair& relay, const std::string& job);
  void wait_for_relays(const std::atomic<bool>* stop);
  void fail_relay(Launch& l, const std::string& reason);
  // What the relay of launch `r` said since the last call: where it listens, site workers
  // joining and leaving. True if a site worker came or went.
  bool read_relay_lines(size_t r);
  // A relay that ended: its site workers saw the job through (exit 0), or are out of it until
  // they join the master directly (--fallback).
  void relay_ended(Launch& l);
  // Launch of the relay of site `site`, if it listens; -1 otherwise.
  int relay_of(const std::string& site) const;

  // "its site's workers", or a Slurm relay's "its worker tasks" (in messages).
  std::string its_workers() const;
  // How a worker launch reaches the job: " (through the relay of site lab)", "" for the master.
  std::string route_of(const Launch& l) const;
  std::string reason_for(const Launch& l, int code) const;
  void give_up_on_silent(Launch& l);
  std::string fate_of(const Launch& l) const;
  std::vector<Launch> m_launches;
  std::map<std::string, size_t> m_launch_of;  // worker (ssh only) or relay name -> its launch
  double m_join_timeout;
  std::map<std::string, int> m_joined;  // worker (or relay) name -> times it is in the job (0 = left)
  std::set<std::string> m_relay_names;  // the relays' names at the master: not workers
  std::set<std::string> m_finished;     // site workers whose relay ended cleanly with the job
  std::set<std::string> m_falling_back;  // workers whose relay died, until they join the master
  std::set<std::string> m_fell_back;     // those that did
  int m_lost = 0;
  int m_workers = 0;  // workers started: one per host, or the allocation's tasks
  int m_relays = 0;   // relays started, one per site (or the Slurm allocation's)
  bool m_slurm = false;
};

}  // namespace farm
