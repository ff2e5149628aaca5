// How a job ended, as the layers below the command line report it; only cli/ turns it into a
// process exit code (cli/exit_codes.h). The error vocabulary is docs/architecture.md, Errors.
#pragma once

#include <exception>

namespace farm {

enum class RunStatus {
  ok,
  failure,    // something went wrong while running (workers lost, interrupted, I/O, the OS)
  bad_input,  // bad scene, option, key file or endpoint: nothing was done
};

// What an exception that ends a command means: a user error (rt::SceneError, from a scene or
// another file the user gave, or std::invalid_argument, from options and their combinations) is
// bad_input; anything else (I/O, the OS, a renderer, a broken invariant) is a failure.
RunStatus run_status_of(const std::exception& e);

}  // namespace farm
