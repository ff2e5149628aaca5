// The makespan bounds (control/makespan_bound.h): hand-solved cases of the fluid equation, the
// indivisible block, and that no simulated run on a random cluster ever beats the honest bound.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "control/makespan_bound.h"
#include "sim/simulator.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

BoundWorker at(double start, double speed, double delay = 0, double end = INFINITY) {
  BoundWorker w;
  w.start = start;
  w.speed = w.thread_speed = speed;
  w.result_delay = delay;
  w.end = end;
  return w;
}

}  // namespace

TEST_CASE("fluid bound: equal workers from time zero meet the plain bound") {
  MakespanBound b = makespan_bound({at(0, 1), at(0, 1), at(0, 2)}, 40, 0);
  CHECK(b.plain == doctest::Approx(10));
  CHECK(b.fluid == doctest::Approx(10));
  CHECK(b.honest() == doctest::Approx(10));
}

TEST_CASE("fluid bound: a late joiner helps only from its start") {
  // T + (T - 10) = 30 -> T = 20, while the plain bound says 15.
  MakespanBound b = makespan_bound({at(0, 1), at(10, 1)}, 30, 0);
  CHECK(b.plain == doctest::Approx(15));
  CHECK(b.fluid == doctest::Approx(20));
  // Joining after the others could finish alone: it adds nothing (T = 8 < 10).
  CHECK(makespan_bound({at(0, 1), at(10, 1)}, 8, 0).fluid == doctest::Approx(8));
}

TEST_CASE("fluid bound: result delays, failures and a cluster that cannot finish") {
  CHECK(makespan_bound({at(0, 1, 1.0)}, 5, 0).fluid == doctest::Approx(6));
  // min(T, 5) + T = 12 -> T = 7.
  CHECK(makespan_bound({at(0, 1, 0, 5), at(0, 1)}, 12, 0).fluid == doctest::Approx(7));
  CHECK(std::isinf(makespan_bound({at(0, 1, 0, 5), at(2, 1, 0, 4)}, 8, 0).fluid));
  CHECK(std::isinf(makespan_bound({}, 1, 0).honest()));
  CHECK(makespan_bound({}, 0, 0).honest() == 0);
}

TEST_CASE("honest bound: the costliest block on the worker that can end it first") {
  // Worker A: from 0 at 1/s ends the 4 s block at 4; worker B from 3 at 2/s ends it at 5.
  MakespanBound b = makespan_bound({at(0, 1), at(3, 2)}, 1, 4);
  CHECK(b.indivisible == doctest::Approx(4));
  CHECK(b.honest() == doctest::Approx(4));
  // A fails before it could finish the block: only B can, at 5.
  CHECK(makespan_bound({at(0, 1, 0, 3), at(3, 2)}, 1, 4).indivisible == doctest::Approx(5));
  // The plain bound counts the block at the fastest thread from time zero.
  CHECK(b.plain == doctest::Approx(2));
}

TEST_CASE("no simulated run beats the honest bound") {
  CostMap map(256, 192, 16, 1);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> cost(0.001, 0.05);
  for (int r = 0; r < map.rows(); ++r)
    for (int c = 0; c < map.columns(); ++c) map.at(1, c, r) = cost(rng);
  for (int trial = 0; trial < 12; ++trial) {
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<SimWorkerSpec> workers;
    const int n = 1 + trial * 3;
    for (int i = 0; i < n; ++i) {
      SimWorkerSpec w;
      w.name = "w" + std::to_string(i);
      w.speed = 0.1 + u(rng);
      w.threads = 1 + (i % 3);
      w.join = u(rng) * 0.5;
      w.startup = u(rng) * 0.3;
      w.latency = u(rng) * 0.02;
      w.bandwidth = 12.5e6;
      if (i % 5 == 4) w.fail = 0.2 + u(rng);
      workers.push_back(w);
    }
    SimOptions o;
    o.scheduler.width = 256;
    o.scheduler.height = 192;
    o.scheduler.block_size = trial % 2 ? 16 : 64;
    o.scheduler.policy = trial % 3 == 0 ? PolicyKind::fixed : PolicyKind::adaptive;
    o.scheduler.base_wait = 0.5;
    o.seed = static_cast<uint64_t>(trial) + 1;
    SimResult res = simulate(map, workers, o);
    INFO("trial " << trial << ": makespan " << res.makespan << ", honest bound " << res.bound.honest());
    REQUIRE(res.completed);
    CHECK(res.bound.honest() > 0);
    CHECK(res.bound.honest() >= res.bound.plain * 0.999);
    CHECK(res.makespan >= res.bound.honest());
  }
}

TEST_CASE("no simulated run beats the honest bound, even when the per-block cost dwarfs a slow worker's render") {
  // The block overhead is seconds whatever the speed: counted as work it must be the slowest
  // thread's worth of it, or a slow cluster finishes below its own bound.
  CostMap map(64, 64, 8, 1);
  for (int r = 0; r < map.rows(); ++r)
    for (int c = 0; c < map.columns(); ++c) map.at(1, c, r) = 0.001;
  for (double speed : {0.05, 0.3, 1.0}) {
    CAPTURE(speed);
    SimWorkerSpec w;
    w.name = "slow";
    w.speed = speed;
    w.startup = 0;
    w.latency = 0;
    SimOptions o;
    o.scheduler.width = o.scheduler.height = 64;
    o.scheduler.block_size = 8;
    o.scheduler.policy = PolicyKind::fixed;
    o.per_block_overhead = 0.02;  // 64 blocks x 20 ms, against 64 ms of work at speed 1
    SimResult res = simulate(map, {w, w}, o);
    REQUIRE(res.completed);
    CHECK(res.makespan >= res.bound.honest());
  }
}

TEST_SUITE_END();
