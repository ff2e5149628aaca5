// The timing and flow constants of the farm's socket loops (master, worker, relay), in one place
// with their reasons. Protocol-level times (heartbeat interval, liveness) are the job's settings
// (scheduler/ids.h defaults, sent in the Welcome); reconnect backoff and fallback are the upstream
// link's (session/upstream_link.h); limits on what a peer may send are base/limits.h's.
#pragma once

#include <chrono>
#include <cstddef>

namespace farm {

// The longest a loop waits on its sockets before it looks at its clock, its stop flag and its
// timers again: what bounds how late a heartbeat, a deadline or SIGTERM is seen (the master stops
// within a second of SIGTERM with margin to spare).
inline constexpr std::chrono::milliseconds k_poll_slice{100};

// Messages read from one socket in one turn of a loop before its timers run again. A serving
// ROUTER (the master, a relay's site side) drains bursts from many peers: 10000 frames is a
// second of a 1000-worker farm's results. One upstream DEALER carries one master's messages,
// which are rarely more than a worker's leases at once.
inline constexpr int k_serve_receive_budget = 10000;
inline constexpr int k_upstream_receive_budget = 1000;

// How long a socket that is closing keeps sending what is queued: JobDone to every peer at the
// end of a job. Every other close discards (LINGER 0): a stopped process must stop now.
inline constexpr int k_final_linger_ms = 500;

// High-water marks. A serving ROUTER queues at most this many messages per peer (bounded memory
// for a slow or hostile peer). A DEALER's sends are bounded by the leases held (2 x threads + 8
// results), so its mark is only a backstop: a send must never be dropped for a full queue (with
// dontwait it would be, silently), least of all a relay's.
inline constexpr int k_router_hwm = 10000;
inline constexpr int k_dealer_send_hwm = 100000;

// The cached assets a participant lists in its Hello (the master then skips sending those). The
// decoder accepts 100000 list items (proto::Limits); a Hello stays small, and a cache with
// more objects than this lists its first ones: the others are sent again if the job needs them.
inline constexpr size_t k_max_announced_assets = 10000;

}  // namespace farm
