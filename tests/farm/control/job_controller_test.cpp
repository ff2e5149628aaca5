// The job controller (control/job_controller.h) with synthetic time: each event makes the
// scheduler calls and statistics the master and the simulator rely on.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "control/job_controller.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

SchedulerConfig small_job() {
  SchedulerConfig c;
  c.width = 64;
  c.height = 32;
  c.block_size = 32;  // two blocks
  c.policy = PolicyKind::seed;  // the cases below follow its halving and waiting times
  c.max_copies = 2;
  c.base_wait = 4.0;
  c.heartbeat_interval = 1.0;
  c.liveness = 3;
  return c;
}

LeaseOutcome outcome_of(const JobController& job, AttemptId attempt) { return job.stats().leases().at(attempt).outcome; }

}  // namespace

TEST_CASE("controller: requests lease blocks and record them, a result is accepted once and its copy cancelled") {
  JobController job(small_job(), nullptr);
  job.join(1, "a", 1, 0.0);
  job.join(2, "b", 1, 0.0);
  std::vector<Assignment> a1 = job.request(1, 0.1, 2);
  REQUIRE(a1.size() == 2);  // both blocks: the pool is drained
  CHECK(job.stats().leases().size() == 2);
  CHECK(outcome_of(job, a1[0].attempt) == LeaseOutcome::outstanding);
  // Worker 2 asks once the pool is empty: it gets a copy of an outstanding block.
  std::vector<Assignment> a2 = job.request(2, 0.2, 1);
  REQUIRE(a2.size() == 1);
  CHECK(a2[0].is_copy);
  const AttemptId copied = a2[0].block.x == a1[0].block.x ? a1[0].attempt : a1[1].attempt;

  CHECK(job.check_lease(2, a2[0].attempt, a2[0].block) == LeaseCheck::ok);
  CHECK(job.check_lease(1, a2[0].attempt, a2[0].block) == LeaseCheck::unknown_lease);  // not worker 1's lease
  Block wrong = a2[0].block;
  wrong.x += 1;
  CHECK(job.check_lease(2, a2[0].attempt, wrong) == LeaseCheck::wrong_rectangle);
  CHECK(job.check_lease(2, 999, a2[0].block) == LeaseCheck::unknown_lease);

  ResultReply won = job.result(2, a2[0].attempt, 0.5, ResultReport{0.2, 0.0, 1000, 77});
  CHECK(won.outcome == ResultOutcome::accepted);
  REQUIRE(won.cancels.size() == 1);
  CHECK(won.cancels[0].worker == 1);
  CHECK(won.cancels[0].attempt == copied);
  CHECK(outcome_of(job, a2[0].attempt) == LeaseOutcome::accepted);
  CHECK(outcome_of(job, copied) == LeaseOutcome::cancelled);  // recorded by the controller, not the driver
  CHECK(job.stats().accepted_rays() == 77);

  // The loser's result arrives anyway: late, nothing to commit.
  ResultReply late = job.result(1, copied, 0.6, ResultReport{0.3, 0.0, 1000, 5});
  CHECK(late.outcome == ResultOutcome::late);
  CHECK(job.stats().accepted_rays() == 77);
}

TEST_CASE("controller: rejected and undeliverable leases give the block back to the pool") {
  JobController job(small_job(), nullptr);
  job.join(1, "a", 1, 0.0);
  std::vector<Assignment> a = job.request(1, 0.0, 2);
  REQUIRE(a.size() == 2);
  job.undeliverable(1, a[0].attempt);
  job.reject(1, a[1].attempt);
  CHECK(outcome_of(job, a[0].attempt) == LeaseOutcome::cancelled);
  CHECK(outcome_of(job, a[1].attempt) == LeaseOutcome::cancelled);
  CHECK(job.scheduler().pending_blocks() == 2);
  CHECK(job.scheduler().outstanding_blocks() == 0);
  std::vector<Assignment> again = job.request(1, 0.1, 2);
  CHECK(again.size() == 2);
}

TEST_CASE("controller: a silent worker is declared dead at interval x liveness, its leases are lost and re-leased") {
  JobController job(small_job(), nullptr);
  job.join(1, "a", 1, 0.0);
  job.join(2, "b", 1, 0.0);
  std::vector<Assignment> a = job.request(1, 0.0, 1);
  REQUIRE(a.size() == 1);
  job.heard(2, 2.9);
  CHECK(job.tick(2.9).empty());
  job.heard(2, 3.0);
  std::vector<WorkerId> dead = job.tick(3.0);
  REQUIRE(dead.size() == 1);
  CHECK(dead[0] == 1);
  CHECK(outcome_of(job, a[0].attempt) == LeaseOutcome::lost);
  CHECK(job.stats().workers().at(1).died);
  CHECK_FALSE(job.scheduler().has_worker(1));
  std::vector<Assignment> b = job.request(2, 3.1, 2);
  CHECK(b.size() == 2);  // its block is back in the pool
}

TEST_CASE("controller: round trips and result transfers feed the waiting time") {
  JobController job(small_job(), nullptr);
  job.join(1, "a", 1, 0.0);
  const Seconds base = job.scheduler().wait_of(1);
  job.round_trip(1, 0.25);
  CHECK(job.rtt_of(1) == 0.25);
  CHECK(job.scheduler().wait_of(1) == doctest::Approx(base + 0.5));  // + 2 rtt
  std::vector<Assignment> a = job.request(1, 0.0, 1);
  REQUIRE(a.size() == 1);
  // 10 s round trip = 1 s render + 0.25 s rtt + 8.75 s transfer of 1 MB: the link is slow.
  job.result(1, a[0].attempt, 10.0, ResultReport{1.0, 0.0, 1'000'000, 0});
  CHECK(job.scheduler().wait_of(1) > base + 0.5);
  // Unknown workers are ignored, not created.
  job.round_trip(7, 1.0);
  CHECK(job.rtt_of(7) == 0);
}

TEST_CASE("controller: what a lease costs besides render, queue and round trip reaches the scheduler") {
  SchedulerConfig c = small_job();
  c.width = 128;  // four blocks
  JobController job(c, nullptr);
  job.join(1, "a", 1, 0.0);
  job.round_trip(1, 0.25);
  CHECK(job.scheduler().lease_overhead_of(1) == 0);  // unknown
  std::vector<Assignment> a = job.request(1, 0.0, 2);
  REQUIRE(a.size() == 2);
  // 2 s lease = 1 s render + 0.5 s queued + 0.25 s rtt + 0.25 s overhead.
  job.result(1, a[0].attempt, 2.0, ResultReport{1.0, 0.5, 100, 0});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.25));
  // A worker's nonsense timings are no sample.
  job.result(1, a[1].attempt, 3.0, ResultReport{std::nan(""), 0.0, 100, 0});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.25));
  // Later samples are smoothed in (0.8 old + 0.2 new); a lease shorter than its parts counts 0.
  std::vector<Assignment> b = job.request(1, 3.0, 2);
  REQUIRE(b.size() == 2);
  job.result(1, b[0].attempt, 3.5, ResultReport{1.0, 0.0, 100, 0});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.8 * 0.25));
  // A large payload's lease is no sample: its transfer would pass for a per-block cost.
  job.result(1, b[1].attempt, 10.0, ResultReport{1.0, 0.0, 1'000'000, 0});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.8 * 0.25));
}

TEST_CASE("controller: a renderer's cost of any block (POV-Ray's start-up) counts in the per-lease overhead") {
  SchedulerConfig c = small_job();
  c.width = 192;  // six blocks
  JobController job(c, nullptr);
  job.join(1, "a", 1, 0.0);
  job.round_trip(1, 0.25);
  std::vector<Assignment> a = job.request(1, 0.0, 3);
  REQUIRE(a.size() == 3);
  // Lease of 2 s = 1 s render + 0.5 s queued + 0.25 s rtt + 0.25 s link overhead; of the 1 s
  // render, 0.75 s is the renderer's start-up, which a smaller block would pay all the same.
  job.result(1, a[0].attempt, 2.0, ResultReport{1.0, 0.5, 100, 0, 0.75});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.25 + 0.75));
  // Nonsense (more than the render, negative, not finite) is no sample.
  job.result(1, a[1].attempt, 4.0, ResultReport{1.0, 0.5, 100, 0, 5.0});
  const double link = 0.8 * 0.25 + 0.2 * (4.0 - 1.0 - 0.5 - 0.25);  // the link part still learns
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(link + 0.75));
  job.result(1, a[2].attempt, 4.0, ResultReport{1.0, 0.5, 100, 0, std::nan("")});
  CHECK(job.scheduler().lease_overhead_of(1) == doctest::Approx(0.8 * link + 0.2 * (4.0 - 1.0 - 0.5 - 0.25) + 0.75));
}

TEST_CASE("controller: with a trace stream every scheduler call is written and replays to the same decisions") {
  std::stringstream trace;
  {
    JobController job(small_job(), &trace);
    job.join(1, "a", 2, 0.0);
    std::vector<Assignment> a = job.request(1, 0.0, 2);
    for (const Assignment& x : a) job.result(1, x.attempt, 1.0, ResultReport{0.5, 0.0, 100, 0});
    CHECK(job.scheduler().done());
  }
  const std::string text = trace.str();
  CHECK(text.rfind("config ", 0) == 0);
  CHECK(text.find("\nJ ") != std::string::npos);
  CHECK(text.find("\nR ") != std::string::npos);
  CHECK(text.find("\nS ") != std::string::npos);
  std::istringstream in(text);
  CHECK(replay_trace(in).ok());
}

TEST_CASE("controller: a relay joins with its site's workers, says so again when its site changes, and replays") {
  std::stringstream trace;
  {
    JobController job(small_job(), &trace);
    job.join(1, "site", 4, 0.0, 3);
    job.resize(1, 6, 4, 0.5);  // a fourth site worker with two threads came
    std::vector<Assignment> a = job.request(1, 1.0, 2);
    for (const Assignment& x : a) job.result(1, x.attempt, 2.0, ResultReport{0.5, 0.0, 100, 0});
    CHECK(job.scheduler().done());
    const std::string stats = job.stats().json(job.scheduler(), 2.0, {});
    CHECK(stats.find("\"threads\": 6, \"site_workers\": 4") != std::string::npos);
  }
  const std::string text = trace.str();
  CHECK(text.find("\nJ 0 1 4 3 : ") != std::string::npos);
  CHECK(text.find("\nJ 0.5 1 6 4 : ") != std::string::npos);
  std::istringstream in(text);
  CHECK(replay_trace(in).ok());
}

TEST_SUITE_END();
