// The keys a launched worker gets from the command that started it (`farm render --hosts` over
// ssh, `--slurm` over srun): sent on the worker's standard input, never on a command line
// (visible in `ps`) nor in a file others could read. Text, one key per line:
//
//   farm-launch-secrets 1
//   worker-public-key <40 Z85 chars>
//   worker-secret-key <40 Z85 chars>
//   master-public-key <40 Z85 chars>
//   end
//
// After "end" the worker keeps its standard input open as a lifeline: end of file means the
// launcher is gone (the master killed, the ssh channel or the Slurm step ended) and the worker exits.
#pragma once

#include <string>

#include "security/socket_security.h"

namespace farm::security {

std::string format_launch_secrets(const CurveClient& keys);

// Reads the block from `fd` up to and including the "end" line (not a byte further, so the
// lifeline is untouched). Throws KeyFileError naming the line that is wrong, or saying that
// the input ended early.
CurveClient read_launch_secrets(int fd);

}  // namespace farm::security
