// `farm relay`: one participant of a job for a whole site (relay/relay.h, docs/relays.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "relay/relay.h"

namespace farm {

struct RelayCommandOptions {
  RelayOptions relay;
  // --key: the relay's own key pair, used on both sides; --master-key: the master's public key
  // (upstream, pinned); --allow: the site workers' public keys (downstream).
  std::string key_path, master_key_path, allow_path;
  std::string endpoint_file;  // --endpoint-file (cli/endpoint_file.h)
  // Started by `farm render --hosts` for a site: keys on standard input (security/launch_secrets.h),
  // which stays open as a lifeline; says on standard output where it listens and which site
  // workers join it (launch/site_relays.h).
  bool launched = false;
};

void add_relay_command(CLI::App& app, RelayCommandOptions& o);
int run_relay_command(const RelayCommandOptions& o);

}  // namespace farm
