// The scheduler's measure of each participant's speed (work per second over all its threads):
// smoothed from its results, for a relay from its site workers' render times, and the sums the
// policies read (PoolView: known speed, known threads, slowest per-thread speed).
#include <algorithm>
#include <cmath>

#include "base/limits.h"
#include "scheduler/scheduler.h"

namespace farm {

void Scheduler::forget_speed(const Worker& w) {
  if (!(w.work_per_second > 0)) return;
  m_known_speed -= w.work_per_second;
  m_known_threads -= w.threads;
  auto it = m_thread_speeds.find(w.work_per_second / w.threads);
  if (it != m_thread_speeds.end()) m_thread_speeds.erase(it);
  if (m_known_threads == 0) m_known_speed = 0;  // no drift from the sums' rounding
}

void Scheduler::count_speed(const Worker& w) {
  if (!(w.work_per_second > 0)) return;
  m_known_speed += w.work_per_second;
  m_known_threads += w.threads;
  m_thread_speeds.insert(w.work_per_second / w.threads);
}

bool Scheduler::measure_speed(Worker& w, double work, Seconds took, Seconds render_seconds) {
  // A relay's threads are its site's workers, each rendering on its own: the time between its
  // results says how busy the site is, not how fast (a site short of blocks looked slow, was fed
  // less, and starved: sim, 10 sites x 100, half the speed measured). Its per-thread speed comes
  // from the render time its worker reports for the block.
  const bool by_render_time = w.members > 0 && std::isfinite(render_seconds) &&
                              render_seconds >= k_min_render_seconds && render_seconds < k_max_render_seconds;
  if (!by_render_time && !(took > 0)) return false;
  const double old_work = w.recent_work, old_seconds = w.recent_seconds;
  forget_speed(w);
  // Older results fade, so a changed speed shows within a few rounds of its threads. Per result
  // the keep is 0.7^(1/threads): one thread's results arrive a block time apart, but a
  // participant of many threads delivers bursts a few ms apart, and a memory of three results
  // then measured the burst, not the rate (a relay of 100 looked 10-100x faster than it is and
  // was leased blocks of minutes: sim, 10 sites x 100).
  const double keep = std::pow(0.7, 1.0 / std::max(1, w.threads));
  w.recent_work = keep * w.recent_work + work;
  w.recent_seconds = keep * w.recent_seconds + (by_render_time ? render_seconds / w.threads : took);
  w.work_per_second = w.recent_work / w.recent_seconds;
  if (!std::isfinite(w.work_per_second) || !(w.work_per_second > 0)) {  // no sample is worth an inf or a NaN
    w.recent_work = old_work;
    w.recent_seconds = old_seconds;
    w.work_per_second = old_seconds > 0 ? old_work / old_seconds : 0;
  }
  count_speed(w);
  return true;
}

void Scheduler::rescale_speed(Worker& w, int old_threads) {
  // Its site workers' render speed holds for the new threads: the same per-thread seconds
  // spread over more (or fewer) of them.
  if (!(w.work_per_second > 0)) return;
  w.recent_seconds *= static_cast<double>(old_threads) / w.threads;
  w.work_per_second = w.recent_work / w.recent_seconds;
}

}  // namespace farm
