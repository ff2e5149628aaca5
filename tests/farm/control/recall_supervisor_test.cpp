// Seed 002's supervisor between relays (control/recall_supervisor.h), the one the master and the
// simulator both use: a dry relay's request waits for a recall's answer, the answer frees the
// blocks and serves it, an unanswered recall expires, a relay gone makes its recalls moot.
#include <doctest/doctest.h>

#include "control/recall_supervisor.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// 32x32 in blocks of 8, fixed, no copies: relay 1 takes 10 blocks, relay 2 the other 6; relay 1
// renders all of its own, relay 2 one of its six: relay 1 is dry, relay 2 has 4 unstarted and
// says so.
struct TwoRelays {
  JobController job{[] {
    SchedulerConfig c;
    c.width = c.height = 32;
    c.block_size = 8;
    c.policy = PolicyKind::fixed;
    c.max_copies = 1;
    return c;
  }(), nullptr};
  RecallSupervisor sup{true, 0.0, 3.0};
  std::vector<Assignment> a1, a2;
  TwoRelays() {
    job.join(1, "r1", 1, 0.0, 2);
    job.join(2, "r2", 1, 0.0, 2);
    sup.relay_joined(1);
    sup.relay_joined(2);
    a1 = job.request(1, 0.0, 10);
    a2 = job.request(2, 0.0, 10);
    for (size_t i = 0; i < a1.size(); ++i) job.result(1, a1[i].attempt, i + 1.0, {});
    job.result(2, a2[0].attempt, 1.0, {});
    // Relay 2 says its four unstarted leases wait at it (it is not dry: served as usual).
    std::optional<RecallOrder> none;
    REQUIRE_FALSE(sup.holds_request(job.scheduler(), 2, 1, 4, 10.0, none));
  }
};

}  // namespace

TEST_CASE("recall supervisor: a dry relay's request waits for a recall, and the answer frees the blocks and serves it") {
  TwoRelays t;
  REQUIRE(t.a1.size() == 10);
  REQUIRE(t.a2.size() == 6);
  std::optional<RecallOrder> order;
  REQUIRE(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 11.0, order));
  REQUIRE(order);
  CHECK(order->from == 2);
  CHECK(order->dry == 1);
  CHECK(order->site_empty);
  CHECK(order->attempts.size() == 2);
  const std::vector<AttemptId> recalled = order->attempts;
  CHECK(t.sup.recalls() == 1);
  // Asking again before the answer: still held, and no second recall.
  CHECK(t.sup.holds_request(t.job.scheduler(), 1, 4, 0, 11.5, order));
  CHECK_FALSE(order);
  // The answer: both back in the pool, and relay 1 served with its last request.
  const RecallAnswer answer = t.sup.released(t.job, 2, recalled);
  CHECK(answer.recalled);
  CHECK(answer.given == 2);
  REQUIRE(answer.serve);
  CHECK(answer.serve->first == 1);
  CHECK(answer.serve->second.credits == 4);
  CHECK(t.sup.recalled_blocks() == 2);
  CHECK(t.job.scheduler().pending_blocks() == 2);
  // With blocks in the pool the request is served as usual.
  CHECK_FALSE(t.sup.holds_request(t.job.scheduler(), 1, 4, 0, 12.0, order));
}

TEST_CASE("recall supervisor: an unanswered recall expires, and the dry relay may be recalled for again") {
  TwoRelays t;
  std::optional<RecallOrder> order;
  REQUIRE(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 11.0, order));
  REQUIRE(order);
  const std::vector<AttemptId> first = order->attempts;
  CHECK(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 13.9, order));  // within the expiry: waits
  CHECK_FALSE(order);
  REQUIRE(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 14.0, order));  // 3 s: given up, asked anew
  REQUIRE(order);
  CHECK(order->attempts == first);  // they are no longer in flight: the same leases are the ones to move
  CHECK(t.sup.recalls() == 2);
}

TEST_CASE("recall supervisor: a recall that could not be sent is forgotten, and a relay gone makes its recalls moot") {
  TwoRelays t;
  std::optional<RecallOrder> order;
  REQUIRE(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 11.0, order));
  REQUIRE(order);
  t.sup.unsent(*order);
  CHECK(t.sup.recalls() == 0);
  REQUIRE(t.sup.holds_request(t.job.scheduler(), 1, 3, 0, 11.1, order));  // tried again at once
  REQUIRE(order);
  t.sup.relay_gone(2);
  // Nobody is recalled from any more, and a Released from a relay gone serves nobody.
  const RecallAnswer late = t.sup.released(t.job, 2, {});
  CHECK_FALSE(late.recalled);
  CHECK_FALSE(late.serve);
  // A plain worker (never relay_joined) is never held.
  CHECK_FALSE(t.sup.holds_request(t.job.scheduler(), 3, 3, 0, 12.0, order));
}

TEST_CASE("recall supervisor: disabled, it never holds a request") {
  TwoRelays t;
  RecallSupervisor off(false, 0.0, 3.0);
  off.relay_joined(1);
  off.relay_joined(2);
  std::optional<RecallOrder> order;
  CHECK_FALSE(off.holds_request(t.job.scheduler(), 2, 1, 4, 10.0, order));
  CHECK_FALSE(off.holds_request(t.job.scheduler(), 1, 3, 0, 11.0, order));
  CHECK_FALSE(order);
}

TEST_SUITE_END();
