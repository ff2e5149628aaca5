#pragma once

namespace farm {
constexpr int k_exit_ok = 0;
constexpr int k_exit_failure = 1;    // something went wrong while running
constexpr int k_exit_bad_input = 2;  // usage error, bad scene, bad option
}  // namespace farm
