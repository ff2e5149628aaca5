// Seed 002's supervisor between relays (Scheduler::plan_recall): once the pool is empty, a relay
// with nothing unstarted (or, with a fraction, too little) gets the newest unstarted leases of
// the relay with the most time left, about what evens the two out; never a worker's, never the
// leases a relay is taken to be rendering, never leases already recalled.
#include <doctest/doctest.h>

#include <algorithm>

#include "scheduler/scheduler.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// 32x32 in blocks of 8 (16 blocks of 64 pixels, work = pixels), fixed: a one-thread participant
// may hold 2 + 8 = 10. Relay 1 takes 10, relay 2 the other 6; both measure 64 pixels/s.
struct TwoSites {
  Scheduler s{[] {
    SchedulerConfig c;
    c.width = c.height = 32;
    c.block_size = 8;
    c.policy = PolicyKind::fixed;
    c.max_copies = 1;  // no copies once the pool drains: relay 2 holds exactly the other 6
    return c;
  }()};
  std::vector<Assignment> a1, a2;
  TwoSites() {
    s.worker_joined(1, 0.0, 1, 1);
    s.worker_joined(2, 0.0, 1, 1);
    a1 = s.request(1, 0.0, 10);
    a2 = s.request(2, 0.0, 10);
  }
};

}  // namespace

TEST_CASE("sites: a relay whose site is empty gets the newest unstarted leases of the one with the most left") {
  TwoSites t;
  REQUIRE(t.a1.size() == 10);
  REQUIRE(t.a2.size() == 6);
  REQUIRE(t.s.pending_blocks() == 0);
  for (int i = 0; i < 10; ++i) t.s.result(1, t.a1[i].attempt, i + 1.0);  // one a second
  t.s.result(2, t.a2[0].attempt, 1.0);
  // Relay 2: one lease taken as rendering, four unstarted (4 s); relay 1 none. Evening out moves
  // 4 x 64 x 64 / 128 = 128 pixels of work: its two newest leases.
  Scheduler::RecallPlan plan = t.s.plan_recall(1, 0.0, {}, {});
  CHECK(plan.from == 2);
  CHECK(plan.site_empty);
  CHECK(plan.attempts == std::vector<AttemptId>{t.a2[5].attempt, t.a2[4].attempt});
  // Those two already recalled (on their way elsewhere): of the two left, half, the newer.
  plan = t.s.plan_recall(1, 0.0, {}, {t.a2[5].attempt, t.a2[4].attempt});
  CHECK(plan.attempts == std::vector<AttemptId>{t.a2[3].attempt});
  // What the relays said is queued counts: with two blocks waiting at relay 2 (its newest), one
  // moves; with one, moving it would only swap which site idles; with none, nothing.
  plan = t.s.plan_recall(1, 0.0, {{2, 2}}, {});
  CHECK(plan.attempts == std::vector<AttemptId>{t.a2[5].attempt});
  CHECK(t.s.plan_recall(1, 0.0, {{2, 1}}, {}).attempts.empty());
  CHECK(t.s.plan_recall(1, 0.0, {{2, 0}}, {}).attempts.empty());
  // Relay 2 itself is not dry (it has unstarted work); a recalled lease released goes back to
  // the pool, and with a pool that is not empty nothing moves.
  CHECK(t.s.plan_recall(2, 0.0, {}, {}).attempts.empty());
  t.s.release(2, t.a2[5].attempt);
  CHECK(t.s.pending_blocks() == 1);
  CHECK(t.s.plan_recall(1, 0.0, {}, {}).attempts.empty());
}

TEST_CASE("sites: below a fraction of the time left, and never for or from a plain worker") {
  TwoSites t;
  for (int i = 0; i < 8; ++i) t.s.result(1, t.a1[i].attempt, i + 1.0);
  t.s.result(2, t.a2[0].attempt, 1.0);
  // Relay 1: one unstarted lease (1 s); relay 2: four (4 s); the job has 7 x 64 / 128 = 3.5 s
  // left. Without a fraction relay 1 is not empty: nothing moves.
  CHECK(t.s.plan_recall(1, 0.0, {}, {}).attempts.empty());
  CHECK(t.s.plan_recall(1, 0.2, {}, {}).attempts.empty());  // 1 s is not below 0.7 s
  // Below half: evening out moves (256 x 64 - 64 x 64) / 128 = 96, one block of 64.
  Scheduler::RecallPlan plan = t.s.plan_recall(1, 0.5, {}, {});
  CHECK(plan.from == 2);
  CHECK_FALSE(plan.site_empty);
  CHECK(plan.attempts == std::vector<AttemptId>{t.a2[5].attempt});

  // The same sites with relay 2 a plain worker: nothing to recall from, nor for one.
  Scheduler s{t.s.config()};
  s.worker_joined(1, 0.0, 1, 1);
  s.worker_joined(2, 0.0, 1, 0);
  std::vector<Assignment> b1 = s.request(1, 0.0, 10), b2 = s.request(2, 0.0, 10);
  for (const Assignment& a : b1) s.result(1, a.attempt, 1.0);
  s.result(2, b2[0].attempt, 1.0);
  CHECK(s.plan_recall(1, 0.0, {}, {}).attempts.empty());
  CHECK(s.plan_recall(2, 0.0, {}, {}).attempts.empty());
}

TEST_SUITE_END();
