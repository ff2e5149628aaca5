// RunStats (control/run_stats.h): the record behind --stats, the tile map and the summary. Each
// lease keeps one outcome, and a worker's totals count only what made it into the image.
#include <doctest/doctest.h>

#include "control/run_stats.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

Assignment lease(WorkerId worker, AttemptId attempt, int x, bool copy = false) {
  Assignment a;
  a.worker = worker;
  a.attempt = attempt;
  a.block = Block{1, x, 0, 16, 8};
  a.is_copy = copy;
  return a;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("run stats: each lease ends in one outcome, and only accepted blocks count in a worker's totals") {
  RunStats stats;
  stats.joined(1, "fast", 2, 0.0);
  stats.joined(2, "slow", 1, 0.5);
  stats.assigned(lease(1, 10, 0), 1.0);
  stats.assigned(lease(2, 11, 16), 1.0);
  stats.assigned(lease(1, 12, 16, true), 3.0);  // a copy of worker 2's block
  stats.assigned(lease(2, 13, 32), 3.0);

  stats.result(1, 10, 2.0, 0.9, 0.1, 1536, 1000, true);
  stats.result(1, 12, 4.0, 0.8, 0.0, 1536, 900, true);   // the copy wins
  stats.result(2, 11, 5.0, 3.5, 0.0, 1536, 1100, false);  // the original arrives late
  stats.left(2, 6.0, true);                                // 13 was outstanding: lost

  const auto& l = stats.leases();
  CHECK(l.at(10).outcome == LeaseOutcome::accepted);
  CHECK(l.at(12).outcome == LeaseOutcome::accepted);
  CHECK(l.at(12).is_copy);
  CHECK(l.at(11).outcome == LeaseOutcome::late);
  CHECK(l.at(13).outcome == LeaseOutcome::lost);
  CHECK(l.at(10).received == doctest::Approx(2.0));
  CHECK(l.at(13).received == -1);

  const WorkerRecord& fast = stats.workers().at(1);
  CHECK(fast.blocks == 2);
  CHECK(fast.pixels == 2 * 16 * 8);
  CHECK(fast.rays == 1900);
  CHECK(fast.busy_seconds == doctest::Approx(1.7));
  const WorkerRecord& slow = stats.workers().at(2);
  CHECK(slow.blocks == 0);  // its only result came late: work done, nothing in the image
  CHECK(slow.busy_seconds == doctest::Approx(3.5));
  CHECK(slow.died);
  CHECK(slow.left == doctest::Approx(6.0));
  CHECK(stats.accepted_rays() == 1900);

  // Cancelling settles only what is still outstanding.
  stats.assigned(lease(1, 14, 48), 7.0);
  stats.cancelled(14);
  stats.cancelled(10);
  CHECK(stats.leases().at(14).outcome == LeaseOutcome::cancelled);
  CHECK(stats.leases().at(10).outcome == LeaseOutcome::accepted);
  // A result for a lease another worker holds changes nothing of that lease.
  stats.result(2, 10, 8.0, 1.0, 0.0, 10, 5, true);
  CHECK(stats.leases().at(10).received == doctest::Approx(2.0));
  CHECK(stats.accepted_rays() == 1900);
}

TEST_CASE("run stats: the JSON names every outcome, the workers' idle time and the scheduler's settings") {
  SchedulerConfig c;
  c.width = 32;
  c.height = 8;
  c.block_size = 16;
  c.policy = PolicyKind::fixed;
  Scheduler scheduler(c);
  RunStats stats;
  stats.joined(1, "w \"one\"", 2, 0.0);
  stats.assigned(lease(1, 1, 0), 0.5);
  stats.result(1, 1, 1.5, 1.0, 0.0, 100, 7, true);
  stats.assigned(lease(1, 2, 16), 1.5);
  stats.bytes_out(1, 64);
  const std::string json = stats.json(scheduler, 4.0, {"\"extra\": 1"});
  CHECK(contains(json, "\"makespan_seconds\": 4.000"));
  CHECK(contains(json, "\"extra\": 1,"));
  CHECK(contains(json, "\"policy\": \"fixed\""));
  CHECK(contains(json, "\"block_size\": 16"));
  CHECK(contains(json, "\"name\": \"w \\\"one\\\"\""));  // escaped
  // Alive 4 s on 2 threads, busy 1 s: idle 7 s.
  CHECK(contains(json, "\"idle_seconds\": 7.000"));
  CHECK(contains(json, "\"bytes_in\": 100, \"bytes_out\": 64"));
  CHECK(contains(json, "\"outcome\": \"accepted\""));
  CHECK(contains(json, "\"outcome\": \"outstanding\""));
  // The start of a block is estimated back from its receipt and render time.
  CHECK(contains(json, "\"start\": 0.500000, \"finish\": 1.500000"));
}

TEST_SUITE_END();
