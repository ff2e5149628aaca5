#include "cli/keygen_command.h"

#include <spdlog/spdlog.h>

#include "cli/exit_codes.h"
#include "security/curve_keys.h"

namespace farm {

void add_keygen_command(CLI::App& app, KeygenOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "keygen", "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub (give it to the other side)");
  cmd->add_option("name", o.name, "Path and name of the key files, without extension (e.g. keys/master)")->required();
  cmd->add_flag("--force", o.force, "Replace existing NAME.key / NAME.pub");
}

int run_keygen_command(const KeygenOptions& o) {
  std::string base = o.name;
  // `farm keygen alice.key` means alice, not alice.key.key.
  for (const char* ext : {".key", ".pub"}) {
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ext) == 0) base.resize(base.size() - 4);
  }
  try {
    security::CurveKeyPair keys = security::generate_key_pair();
    security::write_key_files(base, keys, o.force);
    spdlog::info("wrote {}.key (secret: keep it on this machine) and {}.pub (public key {})", base, base,
                 keys.public_key);
  } catch (const security::KeyFileExists& e) {
    spdlog::error("keygen: {}; pass --force to replace it", e.what());
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    spdlog::error("keygen: {}", e.what());
    return exit_code(run_status_of(e));  // a key file refused: 2; no CURVE here: 1
  }
  return k_exit_ok;
}

}  // namespace farm
