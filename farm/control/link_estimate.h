// The master's estimates of a worker's link from each result (bandwidth, per-lease overhead),
// shared by the ZeroMQ master and the simulator so both feed the scheduler the same numbers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace farm {

// Payloads up to this size carry no bandwidth signal (their transfer is lost in the noise), and
// are the only leases whose per-lease overhead is sampled (a larger one's transfer would pass for it).
constexpr uint64_t k_small_payload_bytes = 4096;

// What the lease's round trip leaves after rendering, queueing and one network round trip is
// taken as transfer time; tiny or negative remainders and small payloads carry no signal.
// Returns the new smoothed estimate (bytes/s), or `current` when this sample is unusable.
inline double update_bandwidth_estimate(double current, double assigned_at, double received_at,
                                        double render_seconds, double queued_seconds, double rtt,
                                        uint64_t wire_bytes) {
  double transfer = (received_at - assigned_at) - render_seconds - queued_seconds - rtt;
  if (!(transfer > 1e-3) || wire_bytes <= k_small_payload_bytes) return current;
  double sample = static_cast<double>(wire_bytes) / transfer;
  return current > 0 ? 0.8 * current + 0.2 * sample : sample;
}

// What a lease costs besides rendering, queueing, one round trip and the result's transfer: the
// worker's own work per block (decode, encode, compress; under a CPU quota it is throttled with
// the render) and the master's delay. Blocks much shorter than this are mostly overhead (the
// factoring policy's floor). Only small payloads (k_small_payload_bytes, the bandwidth estimate's
// cut-off) are samples, less their transfer at the estimated bandwidth: on a slow link a large
// result's transfer grows with the block and would make a per-block cost of it (bigger blocks,
// bigger "overhead", bigger floor: chess2 hetero WAN in simulation went 1.04 -> 1.06 of the
// bound when every lease was a sample). Unusable samples (a worker's nonsense timings) keep `current`.
inline double update_overhead_estimate(double current, double assigned_at, double received_at, double render_seconds,
                                       double queued_seconds, double rtt, uint64_t wire_bytes, double bandwidth) {
  if (!std::isfinite(render_seconds) || !std::isfinite(queued_seconds) || render_seconds < 0 || queued_seconds < 0)
    return current;
  if (wire_bytes > k_small_payload_bytes) return current;
  const double transfer = bandwidth > 0 ? static_cast<double>(wire_bytes) / bandwidth : 0.0;
  const double sample = std::max(0.0, (received_at - assigned_at) - render_seconds - queued_seconds - rtt - transfer);
  if (!std::isfinite(sample)) return current;
  return current >= 0 ? 0.8 * current + 0.2 * sample : sample;
}

// The renderer's own cost of any block (Result.fixed_seconds: POV-Ray's process start and parse,
// which the link estimate above cannot see because it is inside render_seconds). A worker's
// nonsense (negative, not finite, more than the render) keeps `current`.
inline double update_renderer_overhead(double current, double render_seconds, double fixed_seconds) {
  if (!std::isfinite(fixed_seconds) || !std::isfinite(render_seconds) || fixed_seconds <= 0 ||
      fixed_seconds > render_seconds)
    return current;
  return current >= 0 ? 0.8 * current + 0.2 * fixed_seconds : fixed_seconds;
}

}  // namespace farm
