// What ssh will connect to for each host of a host file: `ssh -G HOST` prints the options ssh
// would use after reading its configuration (nobody is contacted), its `hostname` line the real
// name behind an alias. Used only to pick the address the workers connect back to.
//
// A host file may hold thousands of lines and the ssh command may be slow or hang, so the
// probes are bounded three ways: only the first k_max_probes distinct host names are asked,
// all at once; each gets k_probe_seconds; and a set stop flag (Ctrl-C, SIGTERM) ends them
// within k_poll_ms. The ssh command is run from its words (no shell between).
#pragma once

#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace farm {

constexpr size_t k_max_probes = 16;
constexpr double k_probe_seconds = 5.0;
constexpr int k_poll_ms = 50;

// The ssh command cannot be run at all (not found, not executable): a usage error.
struct SshCommandError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct SshProbeResult {
  std::map<std::string, std::string> hostname;  // host as written -> ssh's HostName; only the ones that answered
  std::vector<std::string> asked;               // the hosts probed, in host-file order
  std::vector<std::string> timed_out;           // no answer within k_probe_seconds
  bool stopped = false;                         // `stop` turned true: the answers are partial
};

// `ssh` is the ssh command's words (e.g. {"ssh", "-F", "cfg"}). Throws SshCommandError naming
// the program and the OS reason if it cannot be started.
SshProbeResult probe_ssh_hostnames(const std::vector<std::string>& ssh, const std::vector<std::string>& hosts,
                                   const std::atomic<bool>* stop, double seconds = k_probe_seconds);

// The words of `command` split at spaces (as rsync -e); {"ssh"} for an empty one.
std::vector<std::string> ssh_words(const std::string& command);

}  // namespace farm
