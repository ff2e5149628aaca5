#include "cli/farm_commands.h"
#include "base/memory.h"
#include "base/limits.h"
#include "cli/option_checks.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <tbb/info.h>

#include <csignal>
#include <map>
#include <memory>
#include <optional>

#include "cli/exit_codes.h"
#include "cli/cluster_render.h"
#include "cli/endpoint_file.h"
#include "cli/plan_command.h"
#include "cli/socket_keys.h"
#include "launch/local_workers.h"
#include "scheduler/policy.h"

namespace farm {

namespace {
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
void on_signal(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}
}  // namespace

const std::atomic<bool>* install_stop_flag() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &g_stop;
}

int exit_code_after_signal(RunStatus status, const char* who) {
  if (status == RunStatus::ok && g_stop.load())
    spdlog::info("the {} stopped on {}", who, g_signal.load() == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM");
  return exit_code(status);
}

void add_scheduling_options(CLI::App& cmd, SchedulerConfig& o, bool* policy_chosen, const std::string& wait_flag) {
  // Unset (0) unless given: the policy's default then applies (initial_block_size).
  cmd.add_option("--block", o.block_size,
                 "Initial block size S0 (pixels, side of a square; default: the policy's, " +
                     std::to_string(k_factoring_block_size) + " for factoring, which carves by predicted cost, " +
                     std::to_string(k_default_block_size) + " for the others)")
      ->transform(in_range(1, k_max_block_side));
  CLI::Option* min_block = cmd.add_option("--min-block", o.min_block, "Halving (policies seed and adaptive) never goes below this size")
                               ->transform(in_range(1, k_max_block_side));
  cmd.add_option(wait_flag, o.base_wait,
                 "Base waiting time in seconds before a worker's block size is halved (policies seed and adaptive)")
      ->transform(in_range(0.001, 1e6));
  cmd.add_option("--max-copies", o.max_copies, "Holders of one block at once once the pool drains (1 = no reassignment)")
      ->transform(in_range(1, 64));
  // The names come from the policy's own table (scheduler/policy.h). Taken as text and checked
  // against the names, so help and errors show the names only (a mapping validator would list
  // "adaptive->2 ... OR {2,3,0,1}" and accept the numbers too).
  std::vector<std::string> names;
  for (PolicyKind k : k_all_policies) names.push_back(policy_name(k));
  auto text = std::make_shared<std::string>(policy_name(o.policy));
  CLI::Option* policy = cmd.add_option("--policy", *text,
                                       "Block-size policy: fixed, seed, adaptive or factoring (a POV-Ray scene: "
                                       "fixed, with blocks of 128, 64 or 32 unless --block)")
                            ->check(CLI::IsMember(names))
                            ->type_name("NAME")
                            ->default_str(policy_name(o.policy));
  cmd.parse_complete_callback([&o, min_block, policy, policy_chosen, text] {
    if (std::optional<PolicyKind> k = parse_policy(*text)) o.policy = *k;  // IsMember checked the name
    if (policy_chosen) *policy_chosen = policy->count() > 0;
    if (min_block->count() > 0 && o.min_block > initial_block_size(o)) {
      throw CLI::ValidationError("--min-block", std::to_string(o.min_block) + " is larger than the block size " +
                                                    std::to_string(initial_block_size(o)) + " (--block)");
    }
  });
}

// How fast a silent worker is declared dead (interval x liveness).
void add_liveness_options(CLI::App& cmd, SchedulerConfig& o) {
  cmd.add_option("--heartbeat", o.heartbeat_interval, "Heartbeat interval in seconds")->transform(in_range(0.01, 60.0));
  cmd.add_option("--liveness", o.liveness, "Missed heartbeats before a worker is declared dead")->transform(in_range(1, 100));
}

// The journal of accepted blocks (master/journal.h) and resuming from it.
void add_journal_options(CLI::App& cmd, MasterOptions& o) {
  cmd.add_option("--journal", o.journal_path, "Where accepted blocks are made durable (default: OUTPUT.journal)");
  CLI::Option* none = cmd.add_flag("!--no-journal", o.journal, "Keep no journal (a crash then loses the work done)");
  CLI::Option* resume = cmd.add_flag(
      "--resume", o.resume, "Continue the job recorded in the journal after a crash (starts from the beginning if there is none)");
  CLI::Option* fresh = cmd.add_flag("--fresh", o.fresh, "Discard the journal of an unfinished job and start over");
  resume->excludes(fresh);
  resume->excludes(none);
  cmd.add_flag("--keep-journal", o.keep_journal, "Keep the journal after success (check it with `farm journal`)");
  cmd.add_option("--journal-sync", o.journal_sync, "Seconds between fdatasyncs of the journal (0 = after every block)")
      ->transform(in_range(0.0, 60.0));
}

// The live view (farm/live, docs/live.md).
void add_http_options(CLI::App& cmd, MasterOptions& o) {
  cmd.add_option("--http", o.http,
                 "Serve a live view of the job (image, workers, policy) on ADDRESS:PORT, e.g. 127.0.0.1:0 (0 = any free "
                 "port; the URL is printed)");
  cmd.add_option("--http-token", o.http_token,
                 "Token the live view asks for (?token= or Authorization: Bearer); required off loopback");
  cmd.add_option("--http-linger", o.http_linger, "Seconds the live view keeps serving the final state after the job")
      ->transform(in_range(0.0, 86400.0));
}

void add_master_command(CLI::App& app, MasterCommandOptions& mo) {
  MasterOptions& o = mo.master;
  CLI::App* cmd = app.add_subcommand("master", "Serve one render job to workers over ZeroMQ");
  add_render_options(*cmd, o.render);
  add_scheduling_options(*cmd, o.scheduling, &o.policy_chosen);
  cmd->add_option("--bind", o.bind,
                  "ZeroMQ endpoint to listen on (tcp://*:PORT; port * = any free one); off loopback it needs --key and "
                  "--allow, or --insecure")
      ->check(endpoint_for(EndpointUse::bind));
  cmd->add_option("--endpoint-file", mo.endpoint_file,
                  "Once listening, write the endpoint (with the port * chose) to this file, for scripts");
  cmd->add_option("--key", mo.key_path, "The master's key pair (from `farm keygen`); required unless --bind is loopback");
  cmd->add_option("--allow", mo.allow_path, "Workers' public keys that may connect: a .pub file, a folder of them, or a list");
  cmd->add_flag("--insecure", o.insecure, "Serve a non-loopback endpoint without encryption or authentication");
  add_journal_options(*cmd, o);
  add_http_options(*cmd, o);
  cmd->add_option("--stats", o.stats_path, "Write run statistics (per worker, per block, decisions) as JSON");
  cmd->add_option("--tile-map", o.tile_map_path, "Write the first frame with block outlines coloured by worker");
  cmd->add_option("--cost-map", o.cost_map_path, "Write per-tile render costs derived from the blocks' render times");
  cmd->add_option("--trace", o.trace_path, "Record every scheduler call and its result (for replay: same events, same decisions)");
  cmd->add_flag("!--no-preview", o.preview_costs, "With --policy factoring: skip the preview render that predicts block costs");
  cmd->add_option("--auto", mo.auto_cluster,
                  "Choose --policy/--block/--wait by simulating this cluster description first (as `farm plan`)");
  add_liveness_options(*cmd, o.scheduling);
  cmd->add_option("--give-up-after", o.give_up_after, "Exit 1 after this many seconds without any worker (0 = wait forever)")
      ->transform(in_range(0.0, 1e9));
  cmd->add_flag("!--no-recall", o.recall,
                "Never move unstarted blocks between relays (default: a relay whose site runs dry gets some from the "
                "relay with the most time left)");
  cmd->add_option("--recall-below", o.recall_below,
                  "Also move blocks to a relay whose unstarted work lasts less than this fraction of the time the job "
                  "has left (0 = only when its site has nothing unstarted)")
      ->transform(in_range(0.0, 1.0));
  cmd->add_flag("--compress,!--no-compress", o.compress,
                "zstd-compress result pixels (default on: 2-4x faster on slow links, no loss on loopback)");
}

void add_worker_command(CLI::App& app, WorkerCommandOptions& wo) {
  WorkerOptions& o = wo.worker;
  CLI::App* cmd = app.add_subcommand("worker", "Render blocks for a master");
  cmd->add_option("--connect", o.connect, "Master endpoint, e.g. tcp://host:5555")
      ->required()
      ->check(endpoint_for(EndpointUse::connect));
  cmd->add_option("--key", wo.key_path, "This worker's key pair (from `farm keygen`); required unless --connect is loopback");
  cmd->add_option("--master-key", wo.master_key_path, "The master's public key (its .pub): only that master is trusted");
  cmd->add_flag("--insecure", o.insecure, "Connect to a non-loopback endpoint without encryption or authentication");
  cmd->add_option("--threads", o.threads, "Render threads = blocks rendered at once (default: all cores)")
      ->transform(in_range(0, k_max_threads));
  cmd->add_option("--prefetch", o.prefetch, "Blocks requested beyond one per thread, to hide the round trip")
      ->transform(in_range(0, 1024));
  cmd->add_flag("--once", o.once, "Exit after one job");
  cmd->add_flag("--no-sandbox", wo.no_sandbox,
                "Take POV-Ray and Blender jobs where bubblewrap cannot confine their renderers (docs/sandbox.md): "
                "a master's scene is then a program with this user's rights");
  cmd->add_option("--cache", o.cache_dir, "Folder for shipped scenes and assets (default: $FARM_CACHE or ~/.cache/farm)");
  cmd->add_option("--name", o.name, "Name shown by the master (default: host-pid)");
  cmd->add_option("--give-up-after", o.give_up_after, "Exit 1 after this many seconds without a master (0 = never)")
      ->transform(in_range(0.0, 1e9));
  // For tests of version refusal only.
  cmd->add_option("--protocol-version", o.protocol_version, "Pretend to speak this protocol version (testing)")
      ->group("");
  cmd->add_flag("--launched", o.launched,
                "Started by `farm render --hosts/--slurm`: keys on standard input, which stays open as a lifeline")
      ->group("");
  // Set by `farm render` for a worker behind a relay (its launch secrets carry the master's key).
  cmd->add_option("--fallback", o.fallback, "With --launched: the master to join if the relay goes silent")
      ->group("");
  cmd->add_flag("--null-render", o.null_render, "Return black blocks at once (benchmarks of farm overhead)")->group("");
  cmd->add_option("--hang-after", o.hang_after, "Hang the render thread on the block after N until cancelled (testing)")
      ->group("");
}

void add_render_command(CLI::App& app, RenderCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("render", "Render on this machine with a local master and local workers");
  add_render_options(*cmd, o.master.render);
  add_scheduling_options(*cmd, o.master.scheduling, &o.master.policy_chosen);
  add_liveness_options(*cmd, o.master.scheduling);
  add_journal_options(*cmd, o.master);
  add_http_options(*cmd, o.master);
  cmd->add_option("--workers", o.workers, "Local worker processes")->transform(in_range(1, 256));
  cmd->add_option("--threads", o.threads, "Threads per worker (default: cores / workers)")->transform(in_range(0, k_max_threads));
  cmd->add_option("--prefetch", o.prefetch, "Blocks each worker requests beyond one per thread")->transform(in_range(0, 1024));
  cmd->add_option("--stats", o.master.stats_path, "Write run statistics as JSON");
  cmd->add_option("--tile-map", o.master.tile_map_path, "Write the first frame with block outlines coloured by worker");
  cmd->add_option("--cost-map", o.master.cost_map_path, "Write per-tile render costs derived from the blocks' render times");
  cmd->add_option("--trace", o.master.trace_path, "Record every scheduler call and its result (see `farm master`)");
  cmd->add_flag("!--no-preview", o.master.preview_costs, "With --policy factoring: skip the preview render that predicts block costs");
  cmd->add_flag("--compress,!--no-compress", o.master.compress, "zstd-compress result pixels (default on)");
  CLI::Option* hosts = cmd->add_option(
      "--hosts", o.hosts_path,
      "Start one worker per line of this file over ssh instead of local workers: [user@]host[:port] [threads=N] "
      "[farm=PATH] [cache=DIR]");
  cmd->add_option("--ssh-command", o.ssh_command,
                  "The ssh program and its options, split at spaces and run without a shell, e.g. 'ssh -F my_config' "
                  "(default ssh)");
  cmd->add_option("--join-timeout", o.join_timeout,
                  "With --hosts: a host whose worker has not joined this many seconds after the hosts were started is "
                  "reported and its ssh ended; also how long a relay (a site's, --slurm-relay's) may take to say where "
                  "it listens (default 60)")
      ->transform(in_range(0.1, 86400.0));
  cmd->add_option("--advertise", o.advertise,
                  "The address of this machine the workers connect to (default: the one that routes to the first host)");
  CLI::Option* slurm = cmd->add_flag("--slurm", o.slurm,
                                     "Inside a Slurm allocation (salloc/sbatch): start the workers with srun on its tasks");
  hosts->excludes(slurm);
  cmd->add_flag("--slurm-relay", o.slurm_relay,
                "With --slurm: start a relay on the allocation's first node and the workers against it (for a master "
                "outside the allocation, across a slow link)")
      ->needs(slurm);
  cmd->add_option("--key", o.key_path,
                  "With --hosts/--slurm: the master's own key pair instead of one made for the job");
  cmd->add_option("--allow", o.allow_path,
                  "With --hosts/--slurm: more workers' public keys that may join (workers you start by hand)");
}

int run_master_command(const MasterCommandOptions& o) {
  MasterOptions copy = o.master;
  if (!o.endpoint_file.empty()) {
    if (Status usable = probe_endpoint_file(o.endpoint_file); !usable.ok()) {
      spdlog::error("{}", usable.message());
      return k_exit_bad_input;
    }
    copy.on_bound = write_endpoint_file_after(copy.on_bound, o.endpoint_file);
  }
  // Keys first: a command line that would expose the master fails before any work is done.
  try {
    copy.curve = master_socket_keys(copy.bind, o.key_path, o.allow_path, copy.insecure);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
  if (!o.auto_cluster.empty()) {
    try {
      copy.scheduling = recommend_scheduling(copy.render, o.auto_cluster, PreviewSettings{}, copy.scheduling);
    } catch (const std::exception& e) {
      spdlog::error("--auto: {}", error_text(e));
      return k_exit_bad_input;
    }
    spdlog::info("--auto chose --policy {} --block {} --wait {:g}", policy_name(copy.scheduling.policy),
                 copy.scheduling.block_size, copy.scheduling.base_wait);
    copy.policy_chosen = true;
  }
  copy.stop = install_stop_flag();
  return exit_code(run_master(copy));
}

int run_worker_command(const WorkerCommandOptions& o) {
  WorkerOptions copy = o.worker;
  if (!copy.fallback.empty() && !copy.launched) {
    // Its key comes with the launch secrets; a worker started by hand has none to pin.
    spdlog::error("--fallback is for a worker that `farm render` launched behind a relay (--launched)");
    return k_exit_bad_input;
  }
  if (!copy.launched) {
    try {
      copy.curve = worker_socket_keys(copy.connect, o.key_path, o.master_key_path, copy.insecure);
    } catch (const std::exception& e) {
      spdlog::error("{}", error_text(e));
      return exit_code(run_status_of(e));
    }
  }
  copy.stop = install_stop_flag();
  return exit_code_after_signal(run_worker(copy), "worker");
}

int run_render_command(const RenderCommandOptions& o, const std::string& self_exe) {
  if (!o.hosts_path.empty() || o.slurm) return run_cluster_render(o, self_exe);
  if (!o.key_path.empty() || !o.allow_path.empty()) {
    spdlog::error("--key and --allow belong to --hosts or --slurm: local workers talk over loopback");
    return k_exit_bad_input;
  }
  const int cores = tbb::info::default_concurrency();
  const int threads = o.threads > 0 ? o.threads : std::max(1, cores / o.workers);
  MasterOptions m = o.master;
  m.bind = "tcp://127.0.0.1:*";
  m.stop = install_stop_flag();
  LocalWorkers workers({self_exe, o.workers, threads, o.prefetch, o.master.render.no_sandbox});
  m.on_bound = [&](const std::string& endpoint) { workers.start(endpoint); };
  // If every local worker has exited before the job is done, nobody will finish it.
  m.should_abort = [&] { return workers.all_exited(); };
  const int code = exit_code(run_master(m));
  workers.stop();
  return code;
}

}  // namespace farm
