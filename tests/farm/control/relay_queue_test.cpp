// The relay's bookkeeping (control/relay_queue.h): leases pass through whole, FIFO, under local
// ids; a site worker that leaves gives its blocks back to the front; a withdrawn lease names the
// worker to cancel; stale results are refused; it asks for what the site can hold plus the spare.
#include <doctest/doctest.h>

#include <limits>
#include <map>
#include <random>
#include <vector>

#include "base/limits.h"
#include "control/relay_queue.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

Block block(int x) { return Block{1, x, 0, 16, 16}; }

}  // namespace

TEST_CASE("relay queue: leases go to the site's workers in the master's order, under local ids") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 2);
  CHECK(q.wanted(3) == 2 + 4 + 3);  // one per thread and a spare each, plus the spare blocks
  for (AttemptId a = 101; a <= 105; ++a) q.leased(a, block(static_cast<int>(a - 101) * 16));
  q.leased(101, block(999));  // a repeated id is ignored
  CHECK(q.queued() == 5);
  CHECK(q.wanted(3) == 9 - 5);
  std::vector<SiteAssignment> a1 = q.request(1, 5);
  REQUIRE(a1.size() == 2);  // one thread: at most two held
  CHECK(a1[0].lease.upstream == 101);
  CHECK(a1[1].lease.upstream == 102);
  CHECK(a1[0].local != a1[1].local);
  std::vector<SiteAssignment> a2 = q.request(2, 1);
  REQUIRE(a2.size() == 1);
  CHECK(a2[0].lease.upstream == 103);
  CHECK(a2[0].lease.block == block(32));
  CHECK(q.held() == 3);
  CHECK(q.queued() == 2);
  CHECK(q.request(7, 3).empty());  // not a site worker
}

TEST_CASE("relay queue: no spare block for one worker while another's thread is idle") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 1);
  q.leased(201, block(0));
  q.leased(202, block(16));
  // Two queued, two idle threads: worker 1 asking for two gets one; the other is worker 2's.
  CHECK(q.request(1, 2).size() == 1);
  CHECK(q.request(1, 1).empty());
  CHECK(q.request(2, 2).size() == 1);
  // Both threads busy: a new block may be worker 1's spare.
  q.leased(203, block(32));
  CHECK(q.request(1, 1).size() == 1);
  CHECK(q.queued() == 0);
  // Three queued and worker 2's thread idle again: worker 2 takes one, and one more as a spare
  // once no thread is left idle.
  std::optional<RelayLease> done = q.finished(2, 2);  // its first block, local id 2
  REQUIRE(done);
  q.leased(204, block(48));
  q.leased(205, block(64));
  CHECK(q.request(2, 2).size() == 2);
}

TEST_CASE("relay queue: a result answers its lease once, and another worker's or a stale id is refused") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 1);
  q.leased(11, block(0));
  const SiteAssignment a = q.request(1, 1).at(0);
  CHECK_FALSE(q.finished(2, a.local));  // not its block
  CHECK_FALSE(q.held_by(2, a.local));
  REQUIRE(q.held_by(1, a.local));
  std::optional<RelayLease> done = q.finished(1, a.local);
  REQUIRE(done);
  CHECK(done->upstream == 11);
  CHECK(done->block == block(0));
  CHECK_FALSE(q.finished(1, a.local));  // once
  CHECK(q.held() == 0);
  CHECK(q.queued() == 0);
}

TEST_CASE("relay queue: a worker that leaves gives its blocks back to the front, in the master's order") {
  RelayQueue q;
  q.worker_joined(1, 2);
  q.worker_joined(2, 1);
  for (AttemptId a = 1; a <= 6; ++a) q.leased(a, block(static_cast<int>(a) * 16));
  std::vector<SiteAssignment> held = q.request(1, 4);  // 1..4
  REQUIRE(held.size() == 4);
  q.finished(1, held[1].local);  // lease 2 done
  q.worker_left(1);              // 1, 3, 4 go back, before 5 and 6
  CHECK_FALSE(q.has_worker(1));
  CHECK(q.queued() == 5);
  std::vector<SiteAssignment> next = q.request(2, 2);
  REQUIRE(next.size() == 2);
  CHECK(next[0].lease.upstream == 1);
  CHECK(next[1].lease.upstream == 3);
  CHECK_FALSE(q.finished(1, held[0].local));  // the departed worker's ids mean nothing now
}

TEST_CASE("relay queue: a withdrawn lease leaves the queue, or names the worker holding it") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.leased(1, block(0));
  q.leased(2, block(16));
  const SiteAssignment a = q.request(1, 1).at(0);
  CHECK(q.withdrawn(2).empty());  // queued: just gone
  CHECK(q.queued() == 0);
  std::vector<SiteAssignment> holders = q.withdrawn(1);
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].worker == 1);
  CHECK(holders[0].local == a.local);
  CHECK_FALSE(q.finished(1, a.local));  // its result, if it comes, is dropped
  CHECK(q.withdrawn(1).empty());
}

TEST_CASE("relay queue: an Assign that could not be sent puts its block back at the front") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.leased(1, block(0));
  q.leased(2, block(16));
  const SiteAssignment a = q.request(1, 1).at(0);
  q.undeliverable(1, a.local);
  CHECK(q.held() == 0);
  CHECK(q.queued() == 2);
  CHECK_FALSE(q.finished(1, a.local));
  CHECK(q.request(1, 1).at(0).lease.upstream == 1);  // first again
}

TEST_CASE("relay queue: clearing the leases returns what the site holds and keeps the workers") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 1);
  for (AttemptId a = 1; a <= 4; ++a) q.leased(a, block(static_cast<int>(a) * 16));
  q.request(1, 1);
  q.request(2, 1);
  std::vector<SiteAssignment> held = q.clear_leases();
  CHECK(held.size() == 2);
  CHECK(q.queued() == 0);
  CHECK(q.held() == 0);
  CHECK(q.site_threads() == 2);
  CHECK(q.wanted(0) == 4);
}

TEST_CASE("relay queue: a recall takes back only what no site worker has started") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.leased(301, block(0));
  q.leased(302, block(16));
  q.leased(303, block(32));
  REQUIRE(q.request(1, 1).size() == 1);  // 301 is being rendered
  CHECK_FALSE(q.recall(301));
  CHECK(q.recall(303));
  CHECK_FALSE(q.recall(303));  // once
  CHECK_FALSE(q.recall(999));  // not ours
  CHECK(q.queued() == 1);
  std::vector<SiteAssignment> next = q.request(1, 2);
  REQUIRE(next.size() == 1);
  CHECK(next[0].lease.upstream == 302);
  CHECK(q.wanted(0) == 2 - 2);  // 301 and 302 held, 303 gone
}

TEST_CASE("relay queue: with nothing queued, an idle thread copies a block held past the threshold") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 1);
  q.leased(401, block(0));
  q.leased(402, block(16));
  const SiteAssignment a = q.request(1, 1, 0.0, 2.0).at(0);   // 401 at t = 0 (worker 1 hangs on it)
  const SiteAssignment b = q.request(2, 1, 1.0, 2.0).at(0);   // 402 at t = 1
  CHECK(q.finished(2, b.local));
  // t = 1.5: nothing queued, 401 held 1.5 s < 2 s: no copy yet; without a threshold none at all.
  CHECK(q.request(2, 1, 1.5, 2.0).empty());
  CHECK(q.request(2, 1, 50.0, -1).empty());
  // t = 2.5: worker 2's idle thread copies it; never a second copy, never its own block.
  std::vector<SiteAssignment> c = q.request(2, 1, 2.5, 2.0);
  REQUIRE(c.size() == 1);
  CHECK(c[0].copy);
  CHECK(c[0].lease.upstream == 401);
  CHECK(c[0].local != a.local);
  CHECK(q.request(1, 1, 9.0, 2.0).empty());
  // The copy wins: its lease is answered once, and worker 1 is named to cancel.
  std::vector<SiteAssignment> cancels;
  std::optional<RelayLease> done = q.finished(2, c[0].local, &cancels);
  REQUIRE(done);
  CHECK(done->upstream == 401);
  REQUIRE(cancels.size() == 1);
  CHECK(cancels[0].worker == 1);
  CHECK(cancels[0].local == a.local);
  CHECK_FALSE(q.finished(1, a.local));  // the hung one's result, if it ever comes, is dropped
  CHECK(q.held() == 0);
}

TEST_CASE("relay queue: a copy's holder failing or leaving leaves the other copy, and the last one answers") {
  RelayQueue q;
  q.worker_joined(1, 1);
  q.worker_joined(2, 1);
  q.leased(501, block(0));
  const SiteAssignment a = q.request(1, 1, 0.0, 1.0).at(0);
  CHECK_FALSE(a.copy);
  const SiteAssignment c = q.request(2, 1, 5.0, 1.0).at(0);
  REQUIRE(c.copy);
  CHECK(c.lease.upstream == a.lease.upstream);
  CHECK_FALSE(q.failed(2, c.local));  // worker 1 still renders it: nothing to report upstream
  CHECK(q.held() == 1);
  const SiteAssignment c2 = q.request(2, 1, 6.0, 1.0).at(0);  // copied again
  q.worker_left(1);  // the hung worker is declared dead: the copy goes on, nothing is queued
  CHECK(q.queued() == 0);
  std::optional<RelayLease> failed = q.failed(2, c2.local);  // the last holder fails: report it
  REQUIRE(failed);
  CHECK(failed->upstream == 501);
  CHECK(q.wanted(0) == 2);  // the lease is gone: room for worker 2's two
}

TEST_CASE("relay queue: a recall gives back what is queued, those named first, then the newest, as many") {
  RelayQueue q;
  q.worker_joined(1, 1);
  for (AttemptId a = 601; a <= 605; ++a) q.leased(a, block(static_cast<int>(a - 601) * 16));
  const SiteAssignment held = q.request(1, 1).at(0);  // 601 handed out
  // 601 is held: not given; 605 named and queued; then the newest others up to three in all.
  CHECK(q.recallable({601, 605, 999}) == std::vector<AttemptId>{605, 604, 603});
  CHECK(q.queued() == 4);  // only a question
  CHECK(q.queued_ids() == std::vector<AttemptId>{602, 603, 604, 605});
  // The worker leaves: what it held is returned (to cancel) and queued again, in front.
  std::vector<SiteAssignment> left = q.worker_left(1);
  REQUIRE(left.size() == 1);
  CHECK(left[0].local == held.local);
  CHECK(q.queued_ids() == std::vector<AttemptId>{601, 602, 603, 604, 605});
  CHECK(q.wanted(4) == 0);  // no site worker: nothing to ask for
}

TEST_CASE("relay queue: the spare covers the round trip to the master at the site's pace") {
  // Unknown round trip or block time: the configured spare.
  CHECK(relay_spare(4, 0, 1.0, 100) == 4);
  CHECK(relay_spare(4, 0.4, 0, 100) == 4);
  CHECK(relay_spare(4, std::numeric_limits<double>::infinity(), 1.0, 100) == 4);
  // 100 threads finishing 0.2 s blocks use 200 blocks in a 0.4 s round trip.
  CHECK(relay_spare(4, 0.4, 0.2, 100) == 200);
  // Long blocks or a short trip: never below the configured spare.
  CHECK(relay_spare(4, 0.01, 10.0, 2) == 4);
  CHECK(relay_spare(-3, 0.01, 10.0, 2) == 1);  // ceil(0.002): one block
  CHECK(relay_spare(4, 1e9, 1e-9, 4096) == 1000000);  // nonsense times cannot ask for billions
  // The queue asks for that on top of what its workers hold: 2 threads finishing 0.1 s blocks
  // use 8 in a 0.4 s round trip.
  RelayQueue q;
  q.worker_joined(1, 2);
  CHECK(q.wanted(relay_spare(0, 0.4, 0.1, q.site_threads())) == 4 + 8);
}

TEST_CASE("relay: one smoothing for its times, and nonsense samples leave the estimate alone") {
  CHECK(smoothed_seconds(0, 2.0) == doctest::Approx(2.0));  // the first sample is taken whole
  CHECK(smoothed_seconds(1.0, 2.0) == doctest::Approx(1.2));
  CHECK(smoothed_seconds(1.0, 0.0) == doctest::Approx(0.8));  // an instant block is a time
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), k_max_render_seconds}) {
    CAPTURE(bad);
    CHECK(smoothed_seconds(1.5, bad) == 1.5);
    CHECK(smoothed_seconds(0, bad) == 0);  // still unknown: relay_spare falls back to its spare
  }
}

TEST_CASE("relay: its site copies only once its queue has stayed empty for two round trips to the master") {
  RelayCopyGate gate;
  gate.note(3, 0.0);
  CHECK(gate.copy_after(0.0, 0.2, 0.5) < 0);  // blocks queued: no copies
  gate.note(0, 1.0);                         // empty from 1.0 s
  CHECK(gate.copy_after(1.3, 0.2, 0.5) < 0);  // an ask may still be on its way (0.4 s)
  gate.note(0, 1.5);                         // still empty: counted from when it emptied
  CHECK(gate.copy_after(1.5, 0.2, 0.5) == doctest::Approx(relay_copy_after(0.5)));
  gate.note(1, 1.6);  // a lease came: the master was not dry after all
  gate.note(0, 1.7);
  CHECK(gate.copy_after(1.8, 0.2, 0.5) < 0);
  CHECK(gate.copy_after(2.2, 0.2, 0.5) == doctest::Approx(2.0));  // 4 block times, at least 1 s
  // No round trip measured yet: a second; unknown block time: no copies.
  RelayCopyGate fresh;
  fresh.note(0, 0.0);
  CHECK(fresh.copy_after(0.9, 0, 0.5) < 0);
  CHECK(fresh.copy_after(1.0, 0, 0.5) == doctest::Approx(2.0));
  CHECK(fresh.copy_after(1.0, 0, 0) < 0);
}

TEST_CASE("relay queue: its sums follow every change to its workers (joins, leaves, hand-outs, results, clears)") {
  // The queue keeps its site's threads, capacity and idle threads as running sums; here they are
  // checked against what the workers' own numbers say after each step of a random run.
  std::mt19937 rng(7);
  RelayQueue q;
  std::map<WorkerId, int> threads;  // what the test joined
  std::map<WorkerId, std::vector<AttemptId>> locals;
  AttemptId next_upstream = 1;
  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng() % 7);
    const WorkerId w = 1 + rng() % 6;
    if (op == 0) {
      threads[w] = 1 + static_cast<int>(rng() % 4);  // joins, or says hello again with other threads
      q.worker_joined(w, threads[w]);
    } else if (op == 1 && threads.count(w)) {
      q.worker_left(w);
      threads.erase(w);
      locals.erase(w);
    } else if (op == 2) {
      q.leased(next_upstream++, block(static_cast<int>(rng() % 64) * 16));
    } else if (op == 3 && threads.count(w)) {
      for (const SiteAssignment& a : q.request(w, 1 + static_cast<int>(rng() % 3), step, 50)) locals[w].push_back(a.local);
    } else if (op == 4 && !locals[w].empty()) {
      q.finished(w, locals[w].back());
      locals[w].pop_back();
    } else if (op == 5 && !locals[w].empty()) {
      q.failed(w, locals[w].front());
      locals[w].erase(locals[w].begin());
    } else if (op == 6 && rng() % 50 == 0) {
      q.clear_leases();
      locals.clear();
    }
    int sum = 0, capacity = 0, idle = 0;
    for (const auto& [id, t] : threads) {
      sum += t;
      capacity += relay_holdable(t);
      int holds = 0;  // what it still holds (a copy that lost, or a cleared lease, is not)
      for (const AttemptId local : locals[id]) holds += q.held_by(id, local).has_value();
      idle += std::max(0, t - holds);
    }
    REQUIRE(q.site_threads() == sum);
    REQUIRE(q.idle_threads() == idle);
    REQUIRE(q.workers().size() == threads.size());
    // wanted(0) is what the workers may hold less the leases held: never above their capacity.
    REQUIRE(q.wanted(0) <= capacity);
    if (q.queued() == 0 && q.held() == 0) REQUIRE(q.wanted(0) == (threads.empty() ? 0 : capacity));
  }
}

TEST_SUITE_END();
