// The master's estimate of a worker's link bandwidth from one result transfer, shared by the
// ZeroMQ master and the simulator so both feed the scheduler the same numbers.
#pragma once

#include <cstdint>

namespace farm {

// What the lease's round trip leaves after rendering, queueing and one network round trip is
// taken as transfer time; tiny or negative remainders and small payloads carry no signal.
// Returns the new smoothed estimate (bytes/s), or `current` when this sample is unusable.
inline double update_bandwidth_estimate(double current, double assigned_at, double received_at,
                                        double render_seconds, double queued_seconds, double rtt,
                                        uint64_t wire_bytes) {
  double transfer = (received_at - assigned_at) - render_seconds - queued_seconds - rtt;
  if (!(transfer > 1e-3) || wire_bytes <= 4096) return current;
  double sample = static_cast<double>(wire_bytes) / transfer;
  return current > 0 ? 0.8 * current + 0.2 * sample : sample;
}

}  // namespace farm
