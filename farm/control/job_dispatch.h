// Which job a worker serves, when several jobs share the farm's workers (the service of issue
// 40): a pure state machine, time as an argument, no I/O, so the service and the simulator make
// the same decisions. Each job keeps its own scheduler and block policy; this only decides, at a
// worker's request, whose blocks it gets.
//
// The rules, in order:
// 1. Priority first. A worker goes to the highest-priority job that has blocks to hand out and
//    that it can render; lower priorities get no worker while a higher one has pending blocks,
//    or outstanding blocks it would copy (rule 4): a higher priority finishes first.
// 2. Equal priorities share in proportion: each such job's target is an equal part of the
//    threads of the workers that can serve them. A worker stays with its job while that job
//    holds no more than its target (switching costs a scene load); otherwise it moves to the job
//    furthest below its target, ties to the one that used the fewest decayed worker-seconds
//    (recent use weighs more, so an old job is not starved by a new one catching up, nor a new
//    one by an old one's history), then to the oldest job.
// 3. A worker switches only when it holds no block of its job (`idle`): until then it is told to
//    wait, so no rendered block is abandoned and the switch costs at most one block time.
// 4. When no job of the highest priority with work has blocks to hand out, a worker keeps serving
//    its job if that job (of that priority) can use copies of its outstanding blocks
//    (reassignment, first result wins), else any such job of the highest priority; else it waits.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "scheduler/ids.h"

namespace farm {

using JobKey = uint64_t;  // a job of the service (its queue id), not the content hash of its scene

// A job's priority: higher first (`farm submit --priority`, `farm sim --jobs`).
inline constexpr int k_min_priority = -1000;
inline constexpr int k_max_priority = 1000;

struct DispatchDecision {
  enum class Kind {
    serve,   // give it blocks of `job` (its current job, or a new one: then welcome it there first)
    wait,    // nothing for it now (it finishes the blocks it holds, or no job can use it)
  };
  Kind kind = Kind::wait;
  JobKey job = 0;
  bool switches = false;  // serve: `job` is not the worker's current job
};

class JobDispatch {
 public:
  // `half_life`: the decay of worker-seconds used (seconds); fair share looks at recent use.
  explicit JobDispatch(Seconds half_life = 60.0) : m_half_life(half_life) {}

  // A job to serve; `renderer` names what a worker must be able to run ("native", "povray 3.7",
  // ...). Jobs added earlier are older (ties in rule 2).
  void add_job(JobKey job, int priority, const std::string& renderer, Seconds now);
  // Gone (finished, cancelled): its workers are free at their next request.
  void remove_job(JobKey job, Seconds now);
  void set_priority(JobKey job, int priority);
  // Paused jobs get no worker (their workers are told to wait, and move once idle).
  void set_paused(JobKey job, bool paused);
  // What the job's scheduler has: blocks not yet handed out, and whether it would lease copies
  // of outstanding blocks to an idle worker (the pool is empty, results are missing).
  void set_work(JobKey job, bool pending, bool wants_copies);

  // `renderers`: what it can run (its backends and versions).
  void worker_joined(WorkerId worker, int threads, const std::set<std::string>& renderers, Seconds now);
  void worker_left(WorkerId worker, Seconds now);
  // The worker cannot take part in `job` (it refused it: a renderer or version it lacks, an option
  // it will not run; or it was benched for failing its blocks): it gets that job no more.
  void exclude(WorkerId worker, JobKey job);
  // The service moved the worker to `job` (it sent the welcome), or released it (job 0).
  void assign(WorkerId worker, JobKey job, Seconds now);

  // The decision for a worker asking for blocks; `idle`: it holds no block of its current job.
  DispatchDecision decide(WorkerId worker, bool idle, Seconds now);

  std::optional<JobKey> job_of(WorkerId worker) const;
  int threads_of(JobKey job) const;          // threads of the workers serving it now
  double worker_seconds(JobKey job, Seconds now) const;  // decayed
  double total_worker_seconds(JobKey job, Seconds now) const;  // not decayed: what it used in all

 private:
  struct Job {
    JobKey key = 0;
    int priority = 0;
    std::string renderer;
    uint64_t order = 0;
    bool paused = false;
    bool pending = false;
    bool wants_copies = false;
    double decayed = 0;     // worker-thread-seconds, decayed to `updated`
    double total = 0;       // worker-thread-seconds
    Seconds updated = 0;
    int threads = 0;        // of the workers serving it
  };
  struct Worker {
    int threads = 1;
    std::set<std::string> renderers;
    JobKey job = 0;  // 0: none
    std::set<JobKey> excluded;  // jobs it cannot take part in
  };
  // The job's decayed worker-seconds at `now`, its threads accruing since it was last updated.
  double decayed_at(const Job& j, Seconds now) const;
  // Brings every job's usage up to `now` (each serving worker's threads accrue).
  void accrue(Seconds now);
  bool can_serve(const Worker& w, const Job& j) const {
    return w.renderers.count(j.renderer) > 0 && !w.excluded.count(j.key);
  }

  Seconds m_half_life;
  std::map<JobKey, Job> m_jobs;
  std::map<WorkerId, Worker> m_workers;
  uint64_t m_next_order = 0;
};

}  // namespace farm
