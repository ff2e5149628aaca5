// What a job is served with: its render options, scheduling, outputs, journal, live view and
// the endpoint a one-shot master binds. A ServedJob (served_job.h) reads the job's part; the
// master (master.h) the endpoint's and the stop conditions.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "job/job_spec.h"
#include "scheduler/scheduler_types.h"
#include "security/socket_security.h"

namespace farm {

struct MasterOptions {
  RenderOptions render;
  // Policy, block size, waiting time, copies, heartbeat and liveness; the image size, frames
  // and payload size are filled in from the job.
  SchedulerConfig scheduling;
  // Whether the user chose the policy (the CLI sets it from its flag): where not, a scene of
  // another renderer may get that renderer's measured best default (and an unset block size,
  // scheduling.block_size 0, that renderer's block).
  bool policy_chosen = true;
  std::string bind = "tcp://*:5555";  // not loopback: needs `curve`, or `insecure`
  // CURVE (farm/security): the master's secret key and the workers' public keys that may
  // connect, read from the user's files or made for the job by the launcher (cli/socket_keys.h
  // and cli/cluster_render.h decide). Empty = plaintext: refused off loopback unless `insecure`.
  std::optional<security::CurveServer> curve;
  bool insecure = false;  // plaintext on a non-loopback endpoint, on purpose
  std::string stats_path;
  std::string tile_map_path;
  std::string cost_map_path;  // per-tile costs from the accepted blocks' render seconds
  std::string trace_path;     // every scheduler call and its outputs (scheduler/scheduler_trace.h)
  // With the factoring policy: render a small preview first and let the scheduler size blocks
  // by its predicted costs (costs/preview_cost_map.h).
  bool preview_costs = true;
  double give_up_after = 0;         // > 0: fail after this many seconds without any live worker
  // Seed 002's supervisor between relays (Scheduler::plan_recall): once the pool is empty, a
  // relay with nothing unstarted gets unstarted blocks recalled from the relay with the most
  // time left; with recall_below > 0 also one whose unstarted work lasts less than that fraction
  // of the time the job has left. recall = false: never.
  bool recall = true;
  double recall_below = 0;
  bool compress = true;             // zstd on result pixels (results/bench_pixel_transfer.md)
  std::string build_id;             // reported to workers; empty = this binary's
  // A service's queue id for the job (farm serve), 0 for a one-shot master: mixed into the id its
  // messages carry, so that two submissions of one scene are two jobs to the workers.
  uint64_t service_job = 0;
  // The journal (master/journal.h): accepted blocks made durable, for --resume after a crash.
  bool journal = true;
  std::string journal_path;   // empty = the output path + ".journal"
  bool resume = false;        // continue the job recorded in the journal (fresh start if none)
  bool fresh = false;         // discard the journal of an unfinished job instead of refusing
  bool keep_journal = false;  // keep it after success (audits with `farm journal`)
  double journal_sync = 0.2;  // seconds between fdatasyncs (every record is written at once)
  // The live view (farm/live): "ADDRESS:PORT" to serve it on (port 0: any free one), empty = off.
  // An address off loopback needs a token (refused without one).
  std::string http;
  std::string http_token;
  std::vector<std::string> http_hosts;  // Host names the live view also answers to (render --advertise)
  double http_linger = 0;  // seconds the live view keeps serving the final state after the job
  // Without `http`: keep a live view (ServedJob::live_view) for a server of the host's to show
  // (the farm service's page shows each job's).
  bool keep_live_view = false;
  // Called when a worker of this name joins (true) or leaves, dies or is cut off (false).
  std::function<void(const std::string& name, bool joined)> on_worker_change;
  // Called once the socket is bound, with the actual endpoint (port resolved).
  std::function<void(const std::string&)> on_bound;
  // Polled by the loop; setting it aborts the job (RunStatus::failure).
  const std::atomic<bool>* stop = nullptr;
  // Polled by the loop; a non-empty answer aborts the job with that reason (RunStatus::failure).
  std::function<std::string()> should_abort;
};

}  // namespace farm
