// The keys a launched worker or relay gets from the command that started it (`farm render
// --hosts` over ssh, `--slurm` over srun): sent on its standard input, never on a command line
// (visible in `ps`) nor in a file others could read. Text, one key per line. A worker's:
//
//   farm-launch-secrets 1
//   worker-public-key <40 Z85 chars>
//   worker-secret-key <40 Z85 chars>
//   master-public-key <40 Z85 chars>
//   fallback-public-key <40 Z85 chars>     (only for a worker behind a relay: the master's key)
//   end
//
// A worker behind a relay (a site's, --slurm-relay's) pins the relay's key as "master" and the
// master's as "fallback": if its relay dies it joins the master directly (`farm worker
// --fallback ENDPOINT`).
//
// A relay's (one participant for a site, docs/relays.md): its own pair, used towards the master
// and towards its site's workers as `farm relay --key` does, the master's public key, and one
// line for each site worker that may connect to it (at least one):
//
//   farm-relay-launch-secrets 1
//   relay-public-key <40 Z85 chars>
//   relay-secret-key <40 Z85 chars>
//   master-public-key <40 Z85 chars>
//   allow-public-key <40 Z85 chars>
//   ...
//   end
//
// After "end" the worker or relay keeps its standard input open as a lifeline: end of file means
// the launcher is gone (the master killed, the ssh channel or the Slurm step ended) and it exits.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "security/socket_security.h"

namespace farm::security {

// Site workers one relay's secrets may admit: bounds what a reader takes from its input, and
// keeps the whole text (57 bytes a key) within one pipe of the launcher (launch/child_process.h).
constexpr size_t k_max_relay_allowed_keys = 10000;

// `fallback_key`: the master's public key for a worker behind a relay; "" for none.
std::string format_launch_secrets(const CurveClient& keys, const std::string& fallback_key = "");

struct WorkerLaunchSecrets {
  CurveClient keys;          // the worker's pair, and the key of what it connects to (pinned)
  std::string fallback_key;  // the master's public key behind a relay, else ""
};

// Reads the block from `fd` up to and including the "end" line (not a byte further, so the
// lifeline is untouched). Throws KeyFileError naming the line that is wrong, or saying that
// the input ended early.
WorkerLaunchSecrets read_launch_secrets(int fd);

struct RelayLaunchSecrets {
  CurveClient upstream;           // the relay's own pair, and the master's public key (pinned)
  std::set<std::string> allowed;  // the site workers' public keys
};

// Throws KeyFileError if `keys.allowed` is empty or larger than k_max_relay_allowed_keys: the
// reader would refuse it.
std::string format_relay_launch_secrets(const RelayLaunchSecrets& keys);

// As read_launch_secrets, for a relay: up to and including "end", not a byte further.
RelayLaunchSecrets read_relay_launch_secrets(int fd);

}  // namespace farm::security
