// CPU bandwidth control (CFS quota) as the kernel applies it to a thread group, for the simulator:
// in each period of `period` seconds the group may run `budget` CPU seconds, then it waits for
// the next period. A worker under a quota that waits for the network between blocks loses
// nothing as long as it would have been throttled anyway: idle time within a period is free.
// So on tools/sweep's quota-emulated nodes, hiding round trips (prefetching) can gain less than
// on machines whose idle time is lost. tools/sim/validate.py predicts with and without this model.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace farm {

class QuotaClock {
 public:
  QuotaClock() = default;
  // budget: CPU seconds per period (cores x period).
  QuotaClock(double period, double budget) : m_period(period), m_budget(budget) {}
  bool enabled() const { return m_period > 0 && m_budget > 0; }

  // When `cpu` seconds of CPU work, started at `now` (>= any earlier call's), are done.
  double run(double now, double cpu) {
    if (!enabled()) return now + cpu;
    if (!(cpu > 0)) return now;
    double t = now;
    const int64_t k = static_cast<int64_t>(std::floor(t / m_period));
    if (k > m_index) {
      m_index = k;
      m_used = 0;
    }
    for (;;) {
      const double end = static_cast<double>(m_index + 1) * m_period;
      const double room = std::min(m_budget - m_used, end - t);
      if (cpu <= room) {
        m_used += cpu;
        return t + cpu;
      }
      if (room > 0) {
        cpu -= room;
        m_used += room;
        t += room;
      }
      // Throttled, or the period ended: the next period's budget.
      ++m_index;
      m_used = 0;
      t = std::max(t, static_cast<double>(m_index) * m_period);
    }
  }

 private:
  double m_period = 0, m_budget = 0;
  int64_t m_index = -1;  // the period m_used belongs to
  double m_used = 0;
};

}  // namespace farm
