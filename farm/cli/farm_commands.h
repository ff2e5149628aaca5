// `farm master`, `farm worker` and `farm render` (local mode): option parsing and dispatch.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/render_options.h"
#include "master/master.h"
#include "worker/worker.h"

namespace farm {

struct RenderCommandOptions {
  MasterOptions master;
  int workers = 1;
  int threads = 0;  // per worker; 0 = share the machine's cores among the workers
  int prefetch = 1;
  // Workers on other machines instead of local ones (cli/cluster_render.h).
  std::string hosts_path;     // --hosts FILE: one ssh host per line
  std::string ssh_command = "ssh";
  std::string advertise;      // the address workers connect to; empty = chosen automatically
  bool slurm = false;         // --slurm: srun over the current allocation
  bool slurm_relay = false;   // --slurm-relay: the tasks go through a relay on its first node
  double join_timeout = 60;   // --join-timeout: an ssh whose worker has not joined by then is ended
  // --key, --allow (with --hosts/--slurm): the master's own key pair instead of one made for the
  // job, and more workers' public keys that may join.
  std::string key_path;
  std::string allow_path;
};

// --block, --min-block, --wait, --max-copies and --policy, bound to the scheduler's own settings.
// `policy_chosen`, when given, says after parsing whether --policy was given (an unset --block is
// 0 in `o`: the policy's default, initial_block_size).
// `wait_flag`: the waiting time's flag (`farm submit` calls it --wait-time: its --wait follows the job).
void add_scheduling_options(CLI::App& cmd, SchedulerConfig& o, bool* policy_chosen = nullptr,
                            const std::string& wait_flag = "--wait");
// --heartbeat and --liveness: how fast a silent worker is declared dead (interval x liveness).
void add_liveness_options(CLI::App& cmd, SchedulerConfig& o);
// `--auto CLUSTER.toml`: pick policy, block size and waiting time with `farm plan` first.
struct MasterCommandOptions {
  MasterOptions master;
  std::string auto_cluster;
  std::string endpoint_file;  // --endpoint-file (cli/endpoint_file.h)
  std::string key_path, allow_path;  // --key, --allow (cli/socket_keys.h)
};

// `farm worker`: the worker's options and its key files (cli/socket_keys.h).
struct WorkerCommandOptions {
  WorkerOptions worker;
  std::string key_path, master_key_path;  // --key, --master-key
  bool no_sandbox = false;                 // --no-sandbox (backend/sandbox.h)
};

void add_master_command(CLI::App& app, MasterCommandOptions& o);
void add_worker_command(CLI::App& app, WorkerCommandOptions& o);
void add_render_command(CLI::App& app, RenderCommandOptions& o);

int run_master_command(const MasterCommandOptions& o);
int run_worker_command(const WorkerCommandOptions& o);
// Starts a master in this process and `workers` worker processes on loopback, and cleans
// them up on success, failure and Ctrl-C.
int run_render_command(const RenderCommandOptions& o, const std::string& self_exe);

// Installs SIGINT/SIGTERM handlers that set the returned flag.
const std::atomic<bool>* install_stop_flag();
// The exit code of a worker or relay whose loop returned `status`. One stopped by the flag
// (SIGINT, SIGTERM) stopped as asked: exit 0, saying "the worker stopped on SIGTERM". It holds
// no job's output (its blocks go back to the master's pool), and `farm render`, the launcher and
// service managers stop workers so when a job is done (docs/failures.md, "Signals").
int exit_code_after_signal(RunStatus status, const char* who);

}  // namespace farm
