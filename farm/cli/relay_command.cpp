#include "cli/relay_command.h"

#include <spdlog/spdlog.h>

#include "base/limits.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "cli/option_checks.h"
#include "cli/socket_keys.h"

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
}

int run_relay_command(const RelayCommandOptions& ro) {
  RelayOptions o = ro.relay;
  try {
    RelayKeys keys = relay_socket_keys(o.connect, o.bind, ro.key_path, ro.master_key_path, ro.allow_path, o.insecure);
    o.upstream_curve = std::move(keys.upstream);
    o.site_curve = std::move(keys.site);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return exit_code(run_status_of(e));
  }
  o.stop = install_stop_flag();
  return exit_code(run_relay(o));
}

}  // namespace farm
