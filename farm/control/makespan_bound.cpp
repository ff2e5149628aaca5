#include "control/makespan_bound.h"

#include <algorithm>
#include <cmath>

namespace farm {

namespace {

// Work the workers can finish, results delivered, by time t.
double capacity(const std::vector<BoundWorker>& workers, double t) {
  double done = 0;
  for (const BoundWorker& w : workers) done += w.speed * std::max(0.0, std::min(t - w.result_delay, w.end) - w.start);
  return done;
}

}  // namespace

MakespanBound makespan_bound(const std::vector<BoundWorker>& workers, double work, double costliest_block) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  MakespanBound b;
  double total_speed = 0, fastest_thread = 0;
  b.indivisible = costliest_block > 0 ? inf : 0;
  for (const BoundWorker& w : workers) {
    if (!(w.speed > 0) || !(w.thread_speed > 0)) continue;
    total_speed += w.speed;
    fastest_thread = std::max(fastest_thread, w.thread_speed);
    if (costliest_block > 0) {
      const double finish = w.start + costliest_block / w.thread_speed;
      if (finish <= w.end) b.indivisible = std::min(b.indivisible, finish + w.result_delay);
    }
  }
  if (!(total_speed > 0)) {
    b.plain = b.fluid = work > 0 ? inf : 0;
    return b;
  }
  b.plain = std::max(work / total_speed, fastest_thread > 0 ? costliest_block / fastest_thread : 0.0);
  if (!(work > 0)) return b;
  // Workers that all stop (fail or leave) may never manage W.
  double reachable = 0;
  for (const BoundWorker& w : workers)
    if (w.speed > 0) reachable += std::isinf(w.end) ? inf : w.speed * std::max(0.0, w.end - w.start);
  if (reachable < work) {
    b.fluid = inf;
    return b;
  }
  // capacity() is continuous and non-decreasing in t: bisect once an upper end is found.
  double lo = 0, hi = 1;
  for (const BoundWorker& w : workers) hi = std::max(hi, w.start + w.result_delay);
  hi += work / total_speed;
  while (capacity(workers, hi) < work) hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (capacity(workers, mid) < work ? lo : hi) = mid;
  }
  b.fluid = hi;
  return b;
}

}  // namespace farm
