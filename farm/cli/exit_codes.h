// Process exit codes of every `farm` command (docs/cli.md).
#pragma once

#include "job/run_status.h"

namespace farm {
constexpr int k_exit_ok = 0;
constexpr int k_exit_failure = 1;    // something went wrong while running
constexpr int k_exit_bad_input = 2;  // usage error, bad scene, bad option

constexpr int exit_code(RunStatus status) {
  switch (status) {
    case RunStatus::ok: return k_exit_ok;
    case RunStatus::failure: return k_exit_failure;
    case RunStatus::bad_input: return k_exit_bad_input;
  }
  return k_exit_failure;
}
}  // namespace farm
