// `farm worker`: a ZeroMQ DEALER that joins a master, fetches the scene and its assets into
// a content-addressed cache, renders the blocks it is given on T threads while keeping
// T + prefetch blocks requested, heartbeats, and reconnects with backoff.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "job/run_status.h"
#include "security/socket_security.h"

namespace farm {

struct WorkerOptions {
  std::string connect;           // e.g. tcp://host:5555
  // CURVE (farm/security): this worker's key pair and the master's public key (pinned), read
  // from the user's files (cli/socket_keys.h decides). Empty = plaintext: refused unless
  // `connect` is loopback or `insecure` is set.
  std::optional<security::CurveClient> curve;
  bool insecure = false;
  // Started by `farm render --hosts/--slurm`: the keys come on standard input instead of `curve`
  // (security/launch_secrets.h), which then stays open as a lifeline: its end stops the worker.
  bool launched = false;
  // With `launched`, behind a relay: the master's endpoint. If the relay is silent for as long as
  // a master would be declared gone, the worker joins this endpoint instead, pinning the master's
  // key from its launch secrets (fallback-public-key), and stays with it.
  std::string fallback;
  int threads = 0;               // 0 = all cores
  int prefetch = 1;              // blocks requested beyond one per thread
  bool once = false;             // exit after one job instead of waiting for the next
  std::string cache_dir;         // empty = default_cache_dir()
  std::string name;              // empty = host-pid
  double give_up_after = 0;      // > 0: exit 1 after this long without a master
  uint32_t protocol_version = 0; // 0 = ours; tests set another to check refusal
  bool null_render = false;      // benchmarks: black pixels at once, no ray tracing
  int hang_after = -1;           // tests: the render thread hangs on the block after this many
  const std::atomic<bool>* stop = nullptr;
};

// ok after a job (with --once) or when stopped, failure when the job or the master fails,
// bad_input if the master is incompatible or the keys are wrong.
RunStatus run_worker(const WorkerOptions& options);

}  // namespace farm
