// The factoring policy (scheduler/policy.h): its sizing arithmetic by hand, and scripted runs
// of the scheduler with it. Random event scripts over every policy are in scheduler_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

SchedulerConfig factoring_config(int w, int h, int block) {
  SchedulerConfig c;
  c.width = w;
  c.height = h;
  c.block_size = block;
  c.policy = PolicyKind::factoring;
  return c;
}

// A pool long past the slow start: `work` pending, `threads` over `workers` workers, all measured,
// together `speed` per second, the slowest thread `slowest`.
PoolView settled_pool(double work, int threads, size_t workers, double speed, double slowest) {
  PoolView pool;
  pool.pending_work = work;
  pool.total_threads = threads;
  pool.live_workers = workers;
  pool.known_work_per_second = speed;
  pool.known_threads = threads;
  pool.slowest_thread_work_per_second = slowest;
  pool.age = 1000;
  return pool;
}

// Delivers `attempt` at `now` and returns the next block handed to the worker.
Assignment deliver_and_ask(Scheduler& s, WorkerId w, AttemptId attempt, double now) {
  REQUIRE(s.result(w, attempt, now).outcome == ResultOutcome::accepted);
  auto next = s.request(w, now, 1);
  REQUIRE(next.size() == 1);
  return next[0];
}

}  // namespace

TEST_CASE("factoring: before any speed is known, a small probe block") {
  SchedulerConfig c = factoring_config(256, 256, 128);
  Scheduler s(c);
  s.worker_joined(1, 0, 2);
  s.worker_joined(2, 0, 2);
  // min(65536 px / (4 * 2 * 4 threads), an average 16 x 16 block (4 x min_block a side)):
  // carved 128 -> 64 -> 32 -> 16.
  auto a = s.request(1, 0, 1);
  REQUIRE(a.size() == 1);
  CHECK(a[0].block.size() == 16);
}

TEST_CASE("factoring: block work follows the worker's measured speed and the work left") {
  auto policy = make_policy(PolicyKind::factoring);
  PoolView pool;
  pool.pending_work = 4'000'000;
  pool.total_threads = 4;
  pool.live_workers = 2;
  pool.known_work_per_second = 5000;  // 4000 + 1000, two threads each
  pool.known_threads = 4;
  pool.slowest_thread_work_per_second = 500;
  pool.age = 1000;  // long past the slow start
  WorkerView fast{1, 64, 2, 4.0, 0, 4000, 0, 0}, slow{2, 64, 2, 4.0, 0, 1000, 0, 0};
  // Each block takes (4e6 / 5000 per s) / 4 = 200 s on its worker (factoring's x = 4): fast per
  // thread 2000/s -> 400,000; slow 500/s -> 100,000.
  CHECK(policy->assignment_work(fast, pool) == doctest::Approx(400'000));
  CHECK(policy->assignment_work(slow, pool) == doctest::Approx(100'000));
  CHECK(policy->assignment_size(fast, pool, 4) == 64);  // sizes only cap at S0
  // Slow start: no block longer than the job's age (10 s at 2000/s per thread).
  pool.age = 10;
  CHECK(policy->assignment_work(fast, pool) == doctest::Approx(20'000));
  pool.age = 1000;
  // Half the work left: half the work per block; half of what is out counts as left.
  pool.pending_work = 1'000'000;
  pool.outstanding_work = 2'000'000;
  CHECK(policy->assignment_work(fast, pool) == doctest::Approx(200'000));
  // A worker holding work: what it holds counts against its quarter of the time left, so nobody
  // is committed beyond it and a block the model under-predicts cannot run past the end; one
  // holding a quarter or more gets the floor; one holding more than the time left nothing now.
  // Time left: 2e6 / 5000 = 400 s.
  fast.held_work = 2 * 2000 * 50.0;  // 50 s for each of its 2 threads
  CHECK(policy->assignment_work(fast, pool) == doctest::Approx(2000 * 50.0));  // 400 / 4 - 50 s
  fast.held_work = 2 * 2000 * 300.0;
  CHECK(policy->assignment_work(fast, pool) == doctest::Approx(2000 * 0.002));  // the floor, 2 ms
  fast.held_work = 2 * 2000 * 400.0;
  CHECK(policy->assignment_size(fast, pool, 4) == 0);
  // Nothing left: the floor (2 ms of work), never zero.
  pool.pending_work = pool.outstanding_work = 0;
  CHECK(policy->assignment_work(slow, pool) == doctest::Approx(0.002 * 500));
  // An unmeasured worker is taken to be as slow as the slowest measured thread, and gets no
  // more than a probe: a quarter of an equal share of a quarter of the work per thread.
  pool.pending_work = 2'000'000;
  WorkerView fresh{3, 64, 2, 4.0, 0, 0, 0, 0};
  pool.total_threads = 6;
  pool.live_workers = 3;
  // total speed 5000 + 2 * 1250 (the mean thread) = 7500/s: 2e6 / 7500 / 4 = 67 s at 500/s,
  // above the probe of 2e6 / (4 * 4 * 6).
  CHECK(policy->assignment_work(fresh, pool) == doctest::Approx(2e6 / 96));
  pool.slowest_thread_work_per_second = 100;
  CHECK(policy->assignment_work(fresh, pool) == doctest::Approx(2e6 / 7500 / 4 * 100));
  CHECK(policy->max_in_flight(fresh, pool) == 2);  // nothing queued before its first result
  fast.held_work = 0;
  fast.rtt = 0.5;
  CHECK(policy->max_in_flight(fast, pool) == 3);
  // A relay of the same two threads for two site workers of one thread each: each worker's
  // round trip is covered, as if they were connected directly.
  WorkerView relay = fast;
  relay.members = 2;
  CHECK(policy->max_in_flight(relay, pool) == 4);
  relay.members = 7;  // more members than threads is read as one per thread
  CHECK(policy->max_in_flight(relay, pool) == 4);
}

TEST_CASE("factoring: blocks last at least sqrt(time left x the worker's per-lease overhead)") {
  auto policy = make_policy(PolicyKind::factoring);
  // 0.4 s left at 1000/s: a quarter is 0.1 s
  PoolView pool = settled_pool(400, 1, 1, 1000, 1000);
  WorkerView w{1, 64, 1, 4.0, 0, 1000, 0, 0};
  CHECK(policy->assignment_work(w, pool) == doctest::Approx(100));
  // The tail: 4 ms left. Without a measured overhead the floor is 2 ms of work.
  pool.pending_work = 4;
  CHECK(policy->assignment_work(w, pool) == doctest::Approx(2));
  // 25 ms per lease besides rendering: sqrt(0.004 x 0.025) = 10 ms of work per block.
  w.lease_overhead = 0.025;
  CHECK(policy->assignment_work(w, pool) == doctest::Approx(10));
  // Far from the tail the factoring share is larger and wins.
  pool.pending_work = 400;
  CHECK(policy->assignment_work(w, pool) == doctest::Approx(100));
}

TEST_CASE("factoring: with a cost model, expensive regions are carved finer") {
  SchedulerConfig c = factoring_config(256, 128, 64);
  // The right half costs 16x the left per pixel.
  c.block_cost = [](const Block& b) {
    const int right = std::max(0, b.x + b.width - std::max(b.x, 128));
    return static_cast<double>(b.pixels() - right * b.height) + 16.0 * right * b.height;
  };
  Scheduler s(c);
  s.worker_joined(1, 0, 1);
  s.worker_joined(2, 0, 1);
  double now = 0;
  int64_t left_px = 0, right_px = 0;
  std::vector<Block> order;
  // Both render 10,000 work units per second; sizes come from work, so right blocks are smaller.
  while (!s.done()) {
    for (WorkerId w : {1u, 2u}) {
      for (const Assignment& a : s.request(w, now, 1)) {
        now += c.block_cost(a.block) / 10000.0;
        REQUIRE(s.result(w, a.attempt, now).outcome == ResultOutcome::accepted);
        (a.block.x >= 128 ? right_px : left_px) += a.block.pixels();
        order.push_back(a.block);
      }
    }
  }
  CHECK(left_px == right_px);
  // The costly half goes first (costliest first); where the cheap half starts, the remaining
  // work is the same for both blocks, and the cheap one holds more pixels (16x cheaper).
  const auto first_left = std::find_if(order.begin(), order.end(), [](const Block& b) { return b.x < 128; });
  REQUIRE(first_left != order.begin());
  REQUIRE(first_left != order.end());
  CHECK(std::prev(first_left)->x >= 128);
  CHECK(first_left->pixels() >= 4 * std::prev(first_left)->pixels());
}

TEST_CASE("factoring: a 4x faster worker and a slow one finish together, with small last blocks") {
  SchedulerConfig c = factoring_config(1024, 1024, 64);
  c.max_copies = 1;
  Scheduler s(c);
  s.worker_joined(1, 0, 1);
  s.worker_joined(2, 0, 1);
  // Worker 1 renders 4000 px/s, worker 2 1000 px/s; each has one block out at a time.
  struct Run {
    WorkerId id;
    double speed, t = 0;
    Assignment a{};
    std::vector<int> sizes;
    void next(Scheduler& s) {  // asks for a block at t and renders it
      auto n = s.request(id, t, 1);
      a = n.empty() ? Assignment{} : n[0];
      if (!a.attempt) return;
      sizes.push_back(a.block.size());
      t += a.block.pixels() / speed;
    }
  };
  Run fast{1, 4000, 0, {}, {}}, slow{2, 1000, 0, {}, {}};
  fast.next(s);
  slow.next(s);
  fast.sizes.clear();  // the first blocks come before any measurement
  slow.sizes.clear();
  while (!s.done() && (fast.a.attempt || slow.a.attempt)) {
    Run& r = fast.a.attempt && (fast.t <= slow.t || !slow.a.attempt) ? fast : slow;
    REQUIRE(s.result(r.id, r.a.attempt, r.t).outcome == ResultOutcome::accepted);
    r.next(s);
  }
  const std::vector<int>& sizes1 = fast.sizes;
  const std::vector<int>& sizes2 = slow.sizes;
  const double t1 = fast.t, t2 = slow.t;
  CHECK(s.done());
  REQUIRE(sizes1.size() > 10);
  REQUIRE(sizes2.size() > 3);
  // The last blocks are small for both, and never below min_block.
  CHECK(sizes1.back() < sizes1.front());
  CHECK(sizes2.back() < sizes2.front());
  CHECK(*std::min_element(sizes1.begin(), sizes1.end()) >= c.min_block);
  // Both finish close together: the slow one is never left with a long block.
  CHECK(std::abs(t1 - t2) < 0.2 * std::max(t1, t2));
}

TEST_CASE("factoring: a worker far away gets blocks that outlast its round trip") {
  SchedulerConfig c = factoring_config(2048, 2048, 64);
  Scheduler s(c);
  s.worker_joined(1, 0, 4);
  s.network_sample(1, 0.5, 1e7);
  auto a = s.request(1, 0, 1).at(0);
  // A measured speed of 1000 px/s: the floor is rtt * threads = 2 s of work per block, i.e.
  // 4 threads * 250 px/s per thread * 2 s = 500 px: side 22, however little work is left.
  double t = 0;
  for (int i = 0; i < 4; ++i) {
    t += a.block.pixels() / 1000.0;  // every block at 1000 px/s
    a = deliver_and_ask(s, 1, a.attempt, t);
  }
  CHECK(a.block.size() >= 16);
  CHECK(s.policy().name() == std::string("factoring"));
}

TEST_CASE("factoring: a relay's floor is one site machine's round trip, not the whole site's") {
  auto policy = make_policy(PolicyKind::factoring);
  // the tail: 0.4 s left at 100/s, a quarter is 0.1 s
  PoolView pool = settled_pool(40, 100, 1, 100, 1);
  // 100 threads, 1/s each, 0.4 s away. A worker of 100 threads: one queued block must cover
  // the trip while all 100 render, so it lasts rtt x 100 threads = 40 s on one thread.
  WorkerView machine{1, 64, 100, 4.0, 0, 100, 0.4, 0};
  CHECK(policy->assignment_work(machine, pool) == doctest::Approx(40));
  // A relay of 100 one-thread site workers: each has its own queued block (max_in_flight), so
  // a block covers one worker's trip, 0.4 s; at 40 s a site of 100 was leased blocks of
  // minutes (sim, 10 sites x 100 at 200 ms: 9.4x the honest bound).
  WorkerView relay = machine;
  relay.members = 100;
  CHECK(policy->assignment_work(relay, pool) == doctest::Approx(0.4));
  relay.members = 50;  // two threads a site worker
  CHECK(policy->assignment_work(relay, pool) == doctest::Approx(0.8));
}

TEST_CASE("factoring: the prefetch depth covers the round trip with the blocks a worker holds, not the ones aimed at") {
  auto policy = make_policy(PolicyKind::factoring);
  // 400 s left at 1000/s: the aim is a quarter, 100 s
  PoolView pool = settled_pool(400'000, 1, 1, 1000, 1000);
  WorkerView w{1, 64, 1, 4.0, 0, 1000, 0.4, 0, 0, 0, 0};
  CHECK(policy->max_in_flight(w, pool) == 2);  // holding nothing: 100 s blocks cover 0.4 s with one
  // It holds two blocks of 0.1 s (carving made them far shorter than the aim): four cover the trip.
  w.held_work = 200;
  w.held_blocks = 2;
  CHECK(policy->max_in_flight(w, pool) == 1 + 4);
  // Blocks of next to nothing: no shorter than 2 ms each for the count (200 cover 0.4 s), and
  // never a NaN or an overflow.
  w.held_work = 1e-300;
  CHECK(policy->max_in_flight(w, pool) == 1 + 200);
  w.rtt = 1e300;
  CHECK(policy->max_in_flight(w, pool) == 1 << 20);
}

TEST_CASE("factoring: a relay's speed is its site workers' render speed, however its results bunch up") {
  SchedulerConfig c = factoring_config(512, 512, 16);
  Scheduler s(c);
  s.worker_joined(1, 0, 4, 4);  // a relay: 4 site workers of one thread
  s.worker_joined(2, 0, 4);     // a worker of 4 threads
  std::vector<Assignment> relay = s.request(1, 0, 4), machine = s.request(2, 0, 4);
  REQUIRE(relay.size() == 4);
  REQUIRE(machine.size() == 4);
  // Every block renders in 1 s; the results arrive together at 3 s (the relay's site started late,
  // or its results queued on the WAN link). 256 px (pixels are the unit without a cost model).
  for (const Assignment& a : relay) REQUIRE(s.result(1, a.attempt, 3.0, 1.0).outcome == ResultOutcome::accepted);
  double t = 3.0;
  for (const Assignment& a : machine) {
    REQUIRE(s.result(2, a.attempt, t, 1.0).outcome == ResultOutcome::accepted);
    t += 0.001;
  }
  // The relay: 4 threads x 256 px/s, from the render times.
  CHECK(s.work_per_second_of(1) == doctest::Approx(4 * 256.0));
  // A worker's own speed still comes from the spacing of its results (its link and per-block
  // costs are its own): about 1024 px in about 3 s, whatever it reports.
  CHECK(s.work_per_second_of(2) > 0.25 * 1024 / 3);
  CHECK(s.work_per_second_of(2) < 2.0 * 1024 / 3);
  // A nonsense render time (a broken or hostile site worker) falls back to the spacing.
  Scheduler u(c);
  u.worker_joined(1, 0, 4, 4);
  std::vector<Assignment> a = u.request(1, 0, 1);
  REQUIRE(u.result(1, a.at(0).attempt, 2.0, std::numeric_limits<double>::infinity()).outcome == ResultOutcome::accepted);
  CHECK(u.work_per_second_of(1) == doctest::Approx(a.at(0).block.pixels() / 2.0));
  // So does one too small to be true (a denormal made the speed infinite, then NaN for everyone).
  for (const double tiny : {5e-324, 1e-300, 1e-9}) {
    a = u.request(1, 2.0, 1);
    REQUIRE(u.result(1, a.at(0).attempt, 3.0, tiny).outcome == ResultOutcome::accepted);
    CHECK(std::isfinite(u.work_per_second_of(1)));
    CHECK(u.work_per_second_of(1) < 1e6);
  }
}

TEST_CASE("factoring: with a cost model the costliest blocks go out first, the cheapest last") {
  SchedulerConfig c = factoring_config(256, 128, 32);
  c.frames = {1, 2};
  // The right half costs 16x the left per pixel; within each half, lower rows cost a little more.
  c.block_cost = [](const Block& b) {
    double work = 0;
    for (int x = b.x; x < b.x + b.width; ++x)
      for (int y = b.y; y < b.y + b.height; ++y) work += (x >= 128 ? 16.0 : 1.0) * (1.0 + y / 128.0);
    return work;
  };
  Scheduler s(c);
  s.worker_joined(1, 0, 1);
  double now = 0;
  std::vector<Block> order;
  while (!s.done()) {
    const std::vector<Assignment> got = s.request(1, now, 1);
    REQUIRE(got.size() == 1);
    order.push_back(got[0].block);
    now += c.block_cost(got[0].block) / 1e5;
    REQUIRE(s.result(1, got[0].attempt, now).outcome == ResultOutcome::accepted);
  }
  // Frame by frame; within a frame every right-half block before any left-half one.
  for (size_t i = 1; i < order.size(); ++i) {
    CAPTURE(i);
    CHECK(order[i].frame >= order[i - 1].frame);
    if (order[i].frame == order[i - 1].frame) CHECK(!(order[i - 1].x < 128 && order[i].x >= 128));
  }
  CHECK(order.front().x >= 128);
  CHECK(order.front().y >= 64);  // the costliest rows of the costly half
  // A policy without the ordering hands out the tiling's row-major order, cost model or not.
  c.policy = PolicyKind::adaptive;
  Scheduler raster(c);
  raster.worker_joined(1, 0, 1);
  const std::vector<Assignment> first = raster.request(1, 0, 1);
  REQUIRE(first.size() == 1);
  CHECK(first[0].block.x == 0);
  CHECK(first[0].block.y == 0);
}

TEST_CASE("factoring: a block overdue by more than the job's remaining time is copied before the pool drains") {
  SchedulerConfig c = factoring_config(512, 512, 64);
  c.max_copies = 2;
  c.heartbeat_interval = 1000;  // worker 1 stays alive, it is only slow
  Scheduler s(c);
  s.worker_joined(1, 0, 1);
  s.worker_joined(2, 0, 1);
  // Both measured at 1000 px/s on their first blocks.
  double now = 0;
  for (WorkerId w : {1u, 2u}) {
    auto a = s.request(w, now, 1);
    REQUIRE(a.size() == 1);
    REQUIRE(s.result(w, a[0].attempt, now + a[0].block.pixels() / 1000.0).outcome == ResultOutcome::accepted);
  }
  now = 1.0;
  // Worker 1 takes a block and never delivers it.
  auto stuck = s.request(1, now, 1);
  REQUIRE(stuck.size() == 1);
  bool copied = false;
  int64_t pending_when_copied = 0;
  while (!s.done() && now < 10000) {
    auto got = s.request(2, now, 1);
    if (got.empty()) {
      now += 0.1;
      continue;
    }
    for (const Assignment& a : got) {
      if (a.is_copy) {
        CHECK(a.block == stuck[0].block);
        if (!copied) pending_when_copied = s.pending_pixels();
        copied = true;
      }
      now += a.block.pixels() / 1000.0;
      s.heard_from(1, now);
      s.result(2, a.attempt, now);
    }
  }
  CHECK(s.done());
  CHECK(copied);
  CHECK(pending_when_copied > 0);  // before the pool drained
}

TEST_SUITE_END();
