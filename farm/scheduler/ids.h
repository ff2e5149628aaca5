// The names the scheduler, the protocol and their drivers share: who (a worker), which lease,
// which block, and time; plus the liveness defaults every side starts from. Small on purpose:
// the protocol includes this and block.h, not the scheduler's configuration.
#pragma once

#include <cstdint>

namespace farm {

using WorkerId = uint32_t;
using AttemptId = uint64_t;  // one lease of one block to one worker; never reused
using BlockId = uint64_t;    // one carved block; copies of it share the id
using Seconds = double;

// Liveness defaults of master, worker and simulator alike: zguide's Paranoid Pirate pings every
// second and declares a peer dead after three missed beats.
constexpr Seconds k_default_heartbeat_interval = 1.0;
constexpr int k_default_liveness = 3;

}  // namespace farm
