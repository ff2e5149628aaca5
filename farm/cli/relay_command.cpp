#include "cli/relay_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/memory.h"
#include "base/limits.h"
#include "cli/endpoint_file.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "cli/option_checks.h"
#include "cli/socket_keys.h"
#include "launch/site_relays.h"
#include "security/launch_secrets.h"

namespace farm {

void add_relay_command(CLI::App& app, RelayCommandOptions& ro) {
  RelayOptions& o = ro.relay;
  CLI::App* cmd = app.add_subcommand(
      "relay", "Join a master as one participant for a whole site and serve the site's workers as a master does");
  cmd->add_option("--connect", o.connect, "The master (or a relay above), e.g. tcp://master:5555")
      ->required()
      ->check(endpoint_for(EndpointUse::connect));
  cmd->add_option("--bind", o.bind, "Where the site's workers connect, e.g. tcp://*:5556 (port * = any free one)")
      ->required()
      ->check(endpoint_for(EndpointUse::bind));
  cmd->add_option("--endpoint-file", ro.endpoint_file,
                  "Once listening, write the site's endpoint (with the port * chose) to this file, for scripts");
  cmd->add_option("--key", ro.key_path, "The relay's key pair (from `farm keygen`), used towards both sides");
  cmd->add_option("--master-key", ro.master_key_path,
                  "The master's public key: required with --key unless --connect is loopback");
  cmd->add_option("--allow", ro.allow_path,
                  "The site workers' public keys that may connect: required with --key unless --bind is loopback");
  cmd->add_flag("--insecure", o.insecure, "Use plaintext on a non-loopback endpoint, on purpose");
  cmd->add_option("--threads", o.threads,
                  "The site's render threads, announced to the master (default: those of the first --workers site "
                  "workers, once they have said hello)")
      ->transform(in_range(0, k_max_threads));
  cmd->add_option("--workers", o.workers, "Without --threads: join the master once this many site workers are there")
      ->transform(in_range(1, 100000));
  cmd->add_option("--spare", o.spare,
                  "Unstarted blocks held beyond what the site's workers hold, at least (more when the round trip to "
                  "the master at the site's pace needs more)")
      ->transform(in_range(0, 4096));
  cmd->add_option("--cache", o.cache_dir, "Folder for the site's copy of the scene and assets (default: as a worker's)");
  cmd->add_option("--name", o.name, "Name shown by the master (default: relay-host-pid)");
  cmd->add_flag("--once", o.once, "Exit after one job");
  cmd->add_option("--give-up-after", o.give_up_after, "Exit 1 after this many seconds without a master (0 = never)")
      ->transform(in_range(0.0, 1e9));
  cmd->add_flag("--launched", ro.launched,
                "Started by `farm render --hosts` for a site, or --slurm-relay: keys on standard input, which stays open as a "
                "lifeline")
      ->group("");
}

namespace {

// Lines for the launcher on standard output, whole and at once: the log shares that output.
void tell_launcher(const std::string& line) {
  spdlog::default_logger()->flush();
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// "farm-relay-host NAME\n" for the launcher: one that did not choose the host (srun places a
// Slurm step) points the workers at NAME. The OS's host name, not Slurm's NodeName: that is what
// resolvers know (a NodeName may be a label only Slurm uses). "" if there is none.
std::string host_line() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) {
    spdlog::error("cannot tell the launcher this host's name: {}", std::strerror(errno));
    return "";
  }
  return k_relay_host + std::string(name) + "\n";
}

// `--launched`: the keys come from standard input (the relay's pair, the master's public key,
// the site workers' keys), which then stays open as the lifeline; the launcher learns where the
// relay listens and who joins it from its standard output.
RunStatus launched_relay(const RelayCommandOptions& ro, RelayOptions& o) {
  if (!ro.key_path.empty() || !ro.master_key_path.empty() || !ro.allow_path.empty() || o.insecure) {
    spdlog::error(
        "--launched reads the relay's keys from standard input: drop --key, --master-key, --allow and --insecure");
    return RunStatus::bad_input;
  }
  security::RelayLaunchSecrets keys;
  try {
    keys = security::read_relay_launch_secrets(STDIN_FILENO);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return RunStatus::bad_input;
  }
  o.site_curve = security::CurveServer{keys.upstream.secret_key, std::move(keys.allowed)};
  o.upstream_curve = std::move(keys.upstream);
  o.lifeline_fd = STDIN_FILENO;
  // The host first, in the same write: the launcher makes the workers' endpoint of both.
  o.on_bound = [](const std::string& endpoint) { tell_launcher(host_line() + k_relay_bound + endpoint); };
  o.on_site_worker_change = [](const std::string& name, bool joined) {
    tell_launcher((joined ? k_relay_site_worker_joined : k_relay_site_worker_left) + name);
  };
  return RunStatus::ok;
}

}  // namespace

int run_relay_command(const RelayCommandOptions& ro) {
  RelayOptions o = ro.relay;
  if (!ro.endpoint_file.empty()) {
    if (Status usable = probe_endpoint_file(ro.endpoint_file); !usable.ok()) {
      spdlog::error("{}", usable.message());
      return k_exit_bad_input;
    }
  }
  // After the launcher's line, if launched: the file says the same endpoint.
  auto with_endpoint_file = [&] {
    if (!ro.endpoint_file.empty()) o.on_bound = write_endpoint_file_after(o.on_bound, ro.endpoint_file);
  };
  if (ro.launched) {
    if (RunStatus status = launched_relay(ro, o); status != RunStatus::ok) return exit_code(status);
    with_endpoint_file();
    o.stop = install_stop_flag();
    return exit_code_after_signal(run_relay(o), "relay");
  }
  try {
    RelayKeys keys = relay_socket_keys(o.connect, o.bind, ro.key_path, ro.master_key_path, ro.allow_path, o.insecure);
    o.upstream_curve = std::move(keys.upstream);
    o.site_curve = std::move(keys.site);
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
  with_endpoint_file();
  o.stop = install_stop_flag();
  return exit_code_after_signal(run_relay(o), "relay");
}

}  // namespace farm
