// How a job ended, as the layers below the command line report it; only cli/ turns it into a
// process exit code (cli/exit_codes.h).
#pragma once

namespace farm {

enum class RunStatus {
  ok,
  failure,    // something went wrong while running (workers lost, interrupted, cannot write)
  bad_input,  // bad scene, option, key file or endpoint: nothing was done
};

}  // namespace farm
