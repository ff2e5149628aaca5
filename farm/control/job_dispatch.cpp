#include "control/job_dispatch.h"

#include <cmath>
#include <tuple>

namespace farm {

void JobDispatch::add_job(JobKey job, int priority, const std::string& renderer, Seconds now) {
  accrue(now);
  Job j;
  j.key = job;
  j.priority = priority;
  j.renderer = renderer;
  j.order = m_next_order++;
  j.updated = now;
  m_jobs[job] = j;
}

void JobDispatch::remove_job(JobKey job, Seconds now) {
  accrue(now);
  m_jobs.erase(job);
  for (auto& [id, w] : m_workers)
    if (w.job == job) w.job = 0;
}

void JobDispatch::set_priority(JobKey job, int priority) {
  if (auto it = m_jobs.find(job); it != m_jobs.end()) it->second.priority = priority;
}

void JobDispatch::set_paused(JobKey job, bool paused) {
  if (auto it = m_jobs.find(job); it != m_jobs.end()) it->second.paused = paused;
}

void JobDispatch::set_work(JobKey job, bool pending, bool wants_copies) {
  if (auto it = m_jobs.find(job); it != m_jobs.end()) {
    it->second.pending = pending;
    it->second.wants_copies = wants_copies;
  }
}

void JobDispatch::worker_joined(WorkerId worker, int threads, const std::set<std::string>& renderers, Seconds now) {
  accrue(now);
  Worker w;
  w.threads = threads > 0 ? threads : 1;
  w.renderers = renderers;
  m_workers[worker] = w;
}

void JobDispatch::worker_left(WorkerId worker, Seconds now) {
  accrue(now);
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return;
  if (auto j = m_jobs.find(it->second.job); j != m_jobs.end()) j->second.threads -= it->second.threads;
  m_workers.erase(it);
}

void JobDispatch::assign(WorkerId worker, JobKey job, Seconds now) {
  accrue(now);
  auto it = m_workers.find(worker);
  if (it == m_workers.end()) return;
  Worker& w = it->second;
  if (auto j = m_jobs.find(w.job); j != m_jobs.end()) j->second.threads -= w.threads;
  w.job = m_jobs.count(job) ? job : 0;
  if (auto j = m_jobs.find(w.job); j != m_jobs.end()) j->second.threads += w.threads;
}

double JobDispatch::decayed_at(const Job& j, Seconds now) const {
  const double dt = now - j.updated;
  if (dt <= 0) return j.decayed;
  const double keep = std::exp2(-dt / m_half_life);
  // The exact integral of `threads` over dt under the decay.
  return j.decayed * keep + j.threads * (1.0 - keep) * m_half_life / std::log(2.0);
}

void JobDispatch::accrue(Seconds now) {
  for (auto& [id, j] : m_jobs) {
    const double dt = now - j.updated;
    if (dt <= 0) continue;
    j.decayed = decayed_at(j, now);
    j.total += j.threads * dt;
    j.updated = now;
  }
}

void JobDispatch::exclude(WorkerId worker, JobKey job) {
  auto it = m_workers.find(worker);
  if (it != m_workers.end()) it->second.excluded.insert(job);
}

DispatchDecision JobDispatch::decide(WorkerId worker, bool idle, Seconds now) {
  accrue(now);
  DispatchDecision wait;
  auto wit = m_workers.find(worker);
  if (wit == m_workers.end()) return wait;
  const Worker& w = wit->second;
  const auto current = m_jobs.find(w.job);
  auto go = [&](JobKey job) {
    DispatchDecision d;
    const bool switches = job != w.job;
    if (switches && !idle) return wait;  // it finishes the blocks it holds first (rule 3)
    d.kind = DispatchDecision::Kind::serve;
    d.job = job;
    d.switches = switches;
    return d;
  };
  auto usable = [&](const Job& j) { return !j.paused && can_serve(w, j); };

  // The highest priority with any use for this worker (blocks, or copies of its outstanding
  // ones): nothing below it gets the worker (rule 1), so a job of higher priority finishes first.
  std::optional<int> ceiling;
  for (const auto& [id, j] : m_jobs)
    if (usable(j) && (j.pending || j.wants_copies) && (!ceiling || j.priority > *ceiling)) ceiling = j.priority;
  if (!ceiling) return wait;

  // Rule 1: the highest priority with blocks to hand out that this worker can render.
  bool any = false;
  int top = 0;
  for (const auto& [id, j] : m_jobs) {
    if (!usable(j) || !j.pending || j.priority < *ceiling) continue;
    if (!any || j.priority > top) top = j.priority;
    any = true;
  }
  if (any) {
    // Rule 2: equal shares of the threads that can serve the top jobs.
    std::set<JobKey> top_jobs;
    for (const auto& [id, j] : m_jobs)
      if (usable(j) && j.pending && j.priority == top) top_jobs.insert(id);
    double pool = 0;
    for (const auto& [id, other] : m_workers) {
      for (JobKey k : top_jobs) {
        if (can_serve(other, m_jobs.at(k))) {
          pool += other.threads;
          break;
        }
      }
    }
    const double target = pool / static_cast<double>(top_jobs.size());
    const bool in_top = current != m_jobs.end() && top_jobs.count(current->first);
    // Needed where it is: without it, its job would be below its share.
    if (in_top && current->second.threads - w.threads < target) return go(current->first);
    // Otherwise the top job furthest below its share; then recent use, then age.
    std::optional<JobKey> best;
    std::tuple<double, double, uint64_t> best_key{};
    for (JobKey k : top_jobs) {
      if (in_top && k == current->first) continue;
      const Job& j = m_jobs.at(k);
      const std::tuple<double, double, uint64_t> key{-(target - j.threads), j.decayed, j.order};
      if (!best || key < best_key) {
        best = k;
        best_key = key;
      }
    }
    if (in_top && (!best || -std::get<0>(best_key) <= 0)) return go(current->first);  // nobody is short
    if (best) return go(*best);
    return wait;
  }

  // Rule 4: no blocks to hand out anywhere; copies of outstanding ones, its own job first.
  if (current != m_jobs.end() && usable(current->second) && current->second.wants_copies &&
      current->second.priority >= *ceiling)
    return go(current->first);
  std::optional<JobKey> best;
  std::tuple<int, double, uint64_t> best_key{};
  for (const auto& [id, j] : m_jobs) {
    if (!usable(j) || !j.wants_copies || j.priority < *ceiling) continue;
    const std::tuple<int, double, uint64_t> key{-j.priority, j.decayed, j.order};
    if (!best || key < best_key) {
      best = id;
      best_key = key;
    }
  }
  if (best) return go(*best);
  return wait;
}

std::optional<JobKey> JobDispatch::job_of(WorkerId worker) const {
  auto it = m_workers.find(worker);
  if (it == m_workers.end() || it->second.job == 0) return std::nullopt;
  return it->second.job;
}

int JobDispatch::threads_of(JobKey job) const {
  auto it = m_jobs.find(job);
  return it == m_jobs.end() ? 0 : it->second.threads;
}

double JobDispatch::worker_seconds(JobKey job, Seconds now) const {
  auto it = m_jobs.find(job);
  if (it == m_jobs.end()) return 0;
  return decayed_at(it->second, now);
}

double JobDispatch::total_worker_seconds(JobKey job, Seconds now) const {
  auto it = m_jobs.find(job);
  if (it == m_jobs.end()) return 0;
  const Job& j = it->second;
  return j.total + j.threads * std::max(0.0, now - j.updated);
}

}  // namespace farm
