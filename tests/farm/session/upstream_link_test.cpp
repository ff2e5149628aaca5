// The link to the process above (session/upstream_link.h) on synthetic time: what the worker and
// the relay do when their master goes quiet, comes back, or is gone for good.
#include <doctest/doctest.h>

#include <vector>

#include "session/upstream_link.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

constexpr double k_interval = 1.0;
constexpr double k_liveness = 3;

// Runs checks every 0.1 s from `from` to `to`; returns the times of the reconnects.
std::vector<double> reconnects(UpstreamLink& link, double from, double to) {
  std::vector<double> at;
  for (double t = from; t <= to + 1e-9; t += 0.1)
    if (link.check(t, k_interval, k_liveness, 0).reconnect) at.push_back(t);
  return at;
}

}  // namespace

TEST_CASE("upstream link: a master heard within liveness + 1 intervals is never silent") {
  UpstreamLink link({}, 0);
  link.joined(0);
  for (double t = 0; t < 60; t += 0.1) {
    if (static_cast<int>(t * 10) % 35 == 0) link.heard(t);  // every 3.5 s, under the 4 s allowance
    const LinkDecision d = link.check(t, k_interval, k_liveness, 0);
    REQUIRE_FALSE(d.silent);
    REQUIRE_FALSE(d.reconnect);
  }
}

TEST_CASE("upstream link: silence drops the job after liveness + 1 intervals, then reconnects back off 1, 2, 4 ... up to the cap") {
  UpstreamLinkOptions o;
  o.max_backoff = 8;
  UpstreamLink link(o, 0);
  link.joined(0);
  CHECK_FALSE(link.check(3.9, k_interval, k_liveness, 0).silent);
  const LinkDecision first = link.check(4.05, k_interval, k_liveness, 0);
  CHECK(first.silent);
  CHECK(first.reconnect);
  CHECK(first.silent_for == doctest::Approx(4.05));
  // Each attempt earns one more interval of silence, and no attempt comes before its backoff.
  const std::vector<double> at = reconnects(link, 4.1, 60);
  REQUIRE(at.size() >= 5);
  std::vector<double> gaps;
  double previous = 4.05;
  for (double t : at) {
    gaps.push_back(t - previous);
    previous = t;
  }
  CHECK(gaps[0] == doctest::Approx(2.0).epsilon(0.06));
  CHECK(gaps[1] == doctest::Approx(4.0).epsilon(0.03));
  for (size_t i = 2; i < gaps.size(); ++i) CHECK(gaps[i] == doctest::Approx(8.0).epsilon(0.02));  // the cap
}

TEST_CASE("upstream link: a message resets the backoff, and patience stretches the allowance") {
  UpstreamLink link({}, 0);
  link.joined(0);
  CHECK(link.check(4.1, k_interval, k_liveness, 0).reconnect);        // backoff now 2 s
  CHECK_FALSE(link.check(5.2, k_interval, k_liveness, 0).reconnect);  // silent, but not before 6.1
  CHECK(link.check(6.2, k_interval, k_liveness, 0).reconnect);        // backoff now 4 s
  link.heard(6.3);                                                    // back to 1 s
  CHECK_FALSE(link.check(10.2, k_interval, k_liveness, 0).silent);
  // Files on their way: 10 s more before silence counts.
  CHECK_FALSE(link.check(20.2, k_interval, k_liveness, 10).silent);
  const LinkDecision d = link.check(20.4, k_interval, k_liveness, 10);
  CHECK(d.silent);
  CHECK(d.reconnect);                                                  // backoff now 2 s, not 8
  CHECK_FALSE(link.check(22.3, k_interval, k_liveness, 0).reconnect);
  CHECK(link.check(22.5, k_interval, k_liveness, 0).reconnect);
}

TEST_CASE("upstream link: give_up_after counts from the last message, across reconnects") {
  UpstreamLinkOptions o;
  o.give_up_after = 20;
  UpstreamLink link(o, 0);
  link.joined(0);
  link.heard(10);
  for (double t = 10; t < 30; t += 0.1) REQUIRE_FALSE(link.check(t, k_interval, k_liveness, 0).give_up);
  const LinkDecision d = link.check(30.2, k_interval, k_liveness, 0);
  CHECK(d.give_up);
  CHECK_FALSE(d.reconnect);
  CHECK(d.unheard_for == doctest::Approx(20.2));
  CHECK(link.give_up_due(30.2));
}

TEST_CASE("upstream link: behind a silent relay the fallback comes once, after k_fallback_rounds allowances, with its own give-up time") {
  UpstreamLinkOptions o;
  o.can_fall_back = true;
  o.give_up_after = 40;
  UpstreamLink link(o, 0);
  link.joined(0);
  const double allowance = k_interval * (k_liveness + 1);
  int fallbacks = 0;
  double fell_back_at = -1;
  for (double t = 0; t < 100; t += 0.1) {
    const LinkDecision d = link.check(t, k_interval, k_liveness, 0);
    if (d.fall_back) {
      ++fallbacks;
      fell_back_at = t;
      CHECK(d.reconnect);  // at once, to the fallback
    }
    if (d.give_up) {
      CHECK(t == doctest::Approx(fell_back_at + 40).epsilon(0.01));
      break;
    }
  }
  CHECK(fallbacks == 1);
  CHECK(fell_back_at == doctest::Approx(k_fallback_rounds * allowance).epsilon(0.01));
}

TEST_CASE("upstream link: rejoin_now reconnects at the next check with a whole allowance, silent or not") {
  UpstreamLink link({}, 0);
  link.joined(0);
  link.heard(1);
  link.rejoin_now();
  const LinkDecision d = link.check(1.5, k_interval, k_liveness, 0);
  CHECK(d.reconnect);
  CHECK_FALSE(d.silent);
  CHECK_FALSE(link.check(1.6, k_interval, k_liveness, 0).reconnect);
  CHECK_FALSE(link.check(5.4, k_interval, k_liveness, 0).silent);  // 4 s from the rejoin
  CHECK(link.check(5.6, k_interval, k_liveness, 0).silent);
}

TEST_CASE("upstream link: pings go out every interval, and only the answer to the last one is a round trip") {
  UpstreamLink link({}, 0);
  const auto first = link.ping_due(0, k_interval);
  REQUIRE(first);
  CHECK_FALSE(link.ping_due(0.5, k_interval));
  CHECK(link.pong(*first, 0.25) == doctest::Approx(0.25));
  const auto second = link.ping_due(1.0, k_interval);
  REQUIRE(second);
  CHECK(*second == *first + 1);
  CHECK_FALSE(link.pong(*first, 1.1));  // an old answer says nothing of the link now
  CHECK(link.pong(*second, 1.1) == doctest::Approx(0.1));
}


TEST_CASE("upstream link: a worker's link pings only a master it has not heard for an interval, a relay's every interval") {
  UpstreamLinkOptions worker_options;
  worker_options.ping_while_heard = false;
  UpstreamLink worker(worker_options, 0);
  UpstreamLink relay({}, 0);
  worker.joined(0);
  relay.joined(0);
  int worker_pings = 0, relay_pings = 0;
  // The master's pings arrive every interval for 10 s: the worker only answers them.
  for (int tenth = 0; tenth < 100; ++tenth) {
    const double t = tenth / 10.0;
    if (tenth % 10 == 0) {
      worker.heard(t);
      relay.heard(t);
    }
    worker_pings += worker.ping_due(t, k_interval) ? 1 : 0;
    relay_pings += relay.ping_due(t, k_interval) ? 1 : 0;
  }
  CHECK(worker_pings == 0);
  CHECK(relay_pings == 10);
  // The master falls quiet after 9 s (it restarted and no longer knows us): from 10 s the
  // worker's pings probe it, one per interval, and its answer ("send Hello") brings the rejoin.
  for (int tenth = 100; tenth <= 130; ++tenth) worker_pings += worker.ping_due(tenth / 10.0, k_interval) ? 1 : 0;
  CHECK(worker_pings == 4);
  const std::optional<uint64_t> probe = worker.ping_due(14.0, k_interval);
  REQUIRE(probe);
  REQUIRE(worker.pong(*probe, 14.25));
  CHECK(*worker.pong(*probe, 14.25) == doctest::Approx(0.25));
}

TEST_SUITE_END();
