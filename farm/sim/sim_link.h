// One direction of a simulated link (a worker's to its master or relay, a relay's WAN uplink):
// FIFO, serialised at `bandwidth`, then latency + jitter; never reorders, as a TCP stream.
#pragma once

#include <algorithm>
#include <random>

namespace farm {

struct SimLink {
  double latency = 0, jitter = 0, bandwidth = 0;  // seconds, seconds, bytes/s (0 = unlimited)
  double free_at = 0, last_arrival = 0;
  // When `bytes` sent at `now` arrive.
  double deliver(double now, double bytes, std::mt19937_64& rng) {
    const double start = std::max(now, free_at);
    const double done = start + (bandwidth > 0 ? bytes / bandwidth : 0);
    free_at = done;
    double arrival = done + latency + (jitter > 0 ? std::uniform_real_distribution<double>(0, jitter)(rng) : 0);
    arrival = std::max(arrival, last_arrival);
    last_arrival = arrival;
    return arrival;
  }
};

}  // namespace farm
