// Which job a worker serves (control/job_dispatch.h), on synthetic time: priority first, equal
// shares among equal priorities with a worker staying where it is needed, switches only when
// idle, paused jobs and renderers a worker lacks, copies once no job has blocks to hand out.
#include <doctest/doctest.h>

#include "control/job_dispatch.h"

#include <cmath>

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

const std::set<std::string> k_native = {"native"};

// Asks for `worker` (idle) and applies a switch as the service would (it welcomes the worker to
// the job, then tells the dispatch).
DispatchDecision ask(JobDispatch& d, WorkerId worker, Seconds now, bool idle = true) {
  DispatchDecision decision = d.decide(worker, idle, now);
  if (decision.kind == DispatchDecision::Kind::serve && decision.switches) d.assign(worker, decision.job, now);
  return decision;
}

}  // namespace

TEST_CASE("dispatch: the highest priority with blocks to hand out gets every worker, and equal priorities share") {
  JobDispatch d;
  d.add_job(1, 1, "native", 0);
  d.add_job(2, 5, "native", 0);
  d.add_job(3, 5, "native", 0);
  for (JobKey j : {1, 2, 3}) d.set_work(j, true, false);
  d.worker_joined(10, 1, k_native, 0);
  d.worker_joined(11, 1, k_native, 0);
  CHECK(ask(d, 10, 0).job == 2);  // ties in need and use: the older job
  CHECK(ask(d, 11, 0).job == 3);  // job 2 holds its share of 2 threads / 2 jobs
  CHECK(d.threads_of(1) == 0);
  // They stay while needed: each job holds exactly its share.
  for (int t = 1; t < 5; ++t) {
    CHECK(ask(d, 10, t).job == 2);
    CHECK(ask(d, 11, t).job == 3);
  }
  // Job 2 has handed out its last block: its worker goes to job 3, the other priority-5 job.
  d.set_work(2, false, false);
  const DispatchDecision moved = ask(d, 10, 6);
  CHECK(moved.job == 3);
  CHECK(moved.switches);
  // Only once no priority-5 job has blocks to hand out does the priority-1 job get a worker.
  d.set_work(3, false, false);
  CHECK(ask(d, 11, 7).job == 1);
  CHECK(ask(d, 10, 7).job == 1);
  CHECK(d.threads_of(1) == 2);
}

TEST_CASE("dispatch: a new job of the same priority takes workers down to its share, one switch each") {
  JobDispatch d;
  d.add_job(1, 0, "native", 0);
  d.set_work(1, true, false);
  for (WorkerId w : {10, 11, 12}) {
    d.worker_joined(w, 2, k_native, 0);
    CHECK(ask(d, w, 0).job == 1);
  }
  d.add_job(2, 0, "native", 30);
  d.set_work(2, true, false);
  // Shares of 6 threads: 3 each. Job 1 holds 6: the first worker to ask moves; then job 1 holds
  // 4, and without the next one it would hold 2 (< 3): that one stays.
  CHECK(ask(d, 10, 31).job == 2);
  CHECK(ask(d, 11, 31).job == 1);
  CHECK(ask(d, 12, 31).job == 1);
  CHECK(d.threads_of(1) == 4);
  CHECK(d.threads_of(2) == 2);
  // No flapping: asked again and again, everyone stays.
  for (int t = 32; t < 40; ++t)
    for (WorkerId w : {10, 11, 12}) CHECK_FALSE(ask(d, w, t).switches);
}

TEST_CASE("dispatch: a worker that holds blocks of its job waits instead of switching, and moves once idle") {
  JobDispatch d;
  d.add_job(1, 0, "native", 0);
  d.set_work(1, true, false);
  d.worker_joined(10, 1, k_native, 0);
  CHECK(ask(d, 10, 0).job == 1);
  d.add_job(2, 9, "native", 1);
  d.set_work(2, true, false);
  const DispatchDecision busy = d.decide(10, false, 2);
  CHECK(busy.kind == DispatchDecision::Kind::wait);
  CHECK(d.job_of(10) == JobKey{1});
  const DispatchDecision idle = ask(d, 10, 3);
  CHECK(idle.kind == DispatchDecision::Kind::serve);
  CHECK(idle.job == 2);
  CHECK(idle.switches);
}

TEST_CASE("dispatch: a paused job gets no worker, a resumed one gets its share back") {
  JobDispatch d;
  d.add_job(1, 0, "native", 0);
  d.add_job(2, 0, "native", 0);
  d.set_work(1, true, false);
  d.set_work(2, true, false);
  d.worker_joined(10, 1, k_native, 0);
  d.worker_joined(11, 1, k_native, 0);
  CHECK(ask(d, 10, 0).job == 1);
  CHECK(ask(d, 11, 0).job == 2);
  d.set_paused(2, true);
  CHECK(ask(d, 11, 1).job == 1);
  CHECK(d.threads_of(2) == 0);
  d.set_paused(2, false);
  // Job 1 holds both threads, its share is 1: a worker moves back.
  CHECK(ask(d, 10, 2).job == 2);
  CHECK(ask(d, 11, 2).job == 1);
  // Paused alone: its workers wait.
  d.set_paused(1, true);
  d.set_paused(2, true);
  CHECK(ask(d, 10, 3).kind == DispatchDecision::Kind::wait);
}

TEST_CASE("dispatch: a worker gets only jobs it can render") {
  JobDispatch d;
  d.add_job(1, 9, "povray 3.7", 0);
  d.add_job(2, 1, "native", 0);
  d.set_work(1, true, false);
  d.set_work(2, true, false);
  d.worker_joined(10, 1, k_native, 0);
  d.worker_joined(11, 1, {"native", "povray 3.7"}, 0);
  CHECK(ask(d, 10, 0).job == 2);
  CHECK(ask(d, 11, 0).job == 1);
  // The share of job 1 counts only the threads that can render it.
  d.add_job(3, 9, "povray 3.7", 1);
  d.set_work(3, true, false);
  CHECK(ask(d, 10, 2).job == 2);
  CHECK(ask(d, 11, 2).job == 1);  // the only povray thread: its job's share is 0.5, and it is needed
}

TEST_CASE("dispatch: with no blocks to hand out, a worker takes copies of its own job's, then the highest priority's") {
  JobDispatch d;
  d.add_job(1, 0, "native", 0);
  d.add_job(2, 0, "native", 0);
  d.add_job(3, 5, "native", 0);
  d.worker_joined(10, 1, k_native, 0);
  d.set_work(1, true, false);
  CHECK(ask(d, 10, 0).job == 1);
  d.set_work(1, false, true);
  d.set_work(2, false, true);
  CHECK(ask(d, 10, 1).job == 1);  // its own job's copies at the same priority: no scene to load
  d.set_work(1, false, false);
  CHECK(ask(d, 10, 2).job == 2);
  d.set_work(3, false, true);
  CHECK(ask(d, 10, 3).job == 3);  // a higher priority's copies before its own job's
  d.set_work(2, false, false);
  d.set_work(3, false, false);
  CHECK(ask(d, 10, 4).kind == DispatchDecision::Kind::wait);
}

TEST_CASE("dispatch: a lower priority gets no worker while a higher one can use it for copies") {
  JobDispatch d;
  d.add_job(1, 1, "native", 0);
  d.add_job(2, 5, "native", 0);
  d.worker_joined(10, 1, k_native, 0);
  d.set_work(1, true, false);
  d.set_work(2, false, true);  // its pool drained, a block still out: the worker copies it
  CHECK(ask(d, 10, 0).job == 2);
  d.set_work(2, false, false);  // done: now the lower priority
  CHECK(ask(d, 10, 1).job == 1);
}

TEST_CASE("dispatch: worker-seconds accrue per thread, and the decayed use halves every half-life") {
  JobDispatch d(10.0);
  d.add_job(1, 0, "native", 0);
  d.set_work(1, true, false);
  d.worker_joined(10, 4, k_native, 0);
  ask(d, 10, 0);
  CHECK(d.total_worker_seconds(1, 10) == doctest::Approx(40));
  d.worker_left(10, 10);
  CHECK(d.threads_of(1) == 0);
  const double at_leave = d.worker_seconds(1, 10);
  CHECK(at_leave == doctest::Approx(4 * 10 / 2.0 / std::log(2.0)));  // 4 threads x (1 - 1/2) x h / ln 2
  CHECK(d.worker_seconds(1, 20) == doctest::Approx(at_leave / 2));
  CHECK(d.total_worker_seconds(1, 20) == doctest::Approx(40));
}

TEST_CASE("dispatch: between jobs equally short of their share, the one that used fewer recent worker-seconds") {
  JobDispatch d(60.0);
  d.add_job(1, 0, "native", 0);
  d.add_job(2, 0, "native", 0);
  d.set_work(1, true, false);
  d.set_work(2, false, false);
  d.worker_joined(10, 1, k_native, 0);
  CHECK(ask(d, 10, 0).job == 1);
  // Job 1 used 100 worker-seconds; the worker leaves; job 2 gets work; both are short by the same.
  d.worker_left(10, 100);
  d.set_work(2, true, false);
  d.worker_joined(11, 1, k_native, 100);
  CHECK(ask(d, 11, 100).job == 2);
}

TEST_CASE("dispatch: a worker excluded from a job gets the next job it can take, and the job waits for another") {
  JobDispatch d;
  d.add_job(1, 5, "native", 0);
  d.add_job(2, 1, "native", 0);
  d.set_work(1, true, false);
  d.set_work(2, true, false);
  d.worker_joined(10, 1, k_native, 0);
  d.worker_joined(11, 1, k_native, 0);
  CHECK(ask(d, 10, 0).job == 1);
  d.exclude(10, 1);  // it refused job 1 (say, its renderer is missing)
  d.assign(10, 0, 1);
  CHECK(ask(d, 10, 1).job == 2);  // the lower priority, which it can take
  CHECK(ask(d, 11, 1).job == 1);  // another worker still serves job 1
}

TEST_SUITE_END();
