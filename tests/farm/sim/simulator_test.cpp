// The discrete-event simulator: exact makespans on hand-computable clusters, determinism,
// failures, and that it drives the real scheduler to the same decisions as a scan would.
#include <doctest/doctest.h>

#include <string>

#include <sstream>

#include "scheduler/scheduler_trace.h"
#include "sim/cluster_spec.h"
#include "sim/quota_clock.h"
#include "farm/uniform_cost_map.h"
#include "sim/simulator.h"
#include "control/renderer_failures.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

SimWorkerSpec worker(double speed, double latency = 0, int prefetch = 0) {
  SimWorkerSpec w;
  w.name = "w";
  w.speed = speed;
  w.threads = 1;
  w.prefetch = prefetch;
  w.startup = 0;
  w.latency = latency;
  w.bandwidth = 0;
  return w;
}

SimOptions options(int width, int height, int block, PolicyKind policy = PolicyKind::fixed, int copies = 1) {
  SimOptions o;
  o.scheduler.width = width;
  o.scheduler.height = height;
  o.scheduler.block_size = block;
  o.scheduler.policy = policy;
  o.scheduler.max_copies = copies;
  o.scheduler.base_wait = 100;
  o.per_block_overhead = 0;
  o.master_message_cost = 0;
  return o;
}

}  // namespace

TEST_CASE("sim: two equal workers, uniform cost, no latency: makespan is half the work") {
  // 64x64 in 16x16 blocks = 16 blocks of 0.5 s; each worker renders 8 back to back.
  CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  SimResult r = simulate(map, {worker(1), worker(1)}, options(64, 64, 16));
  REQUIRE(r.completed);
  CHECK(r.blocks == 16);
  CHECK(r.makespan == doctest::Approx(4.0).epsilon(1e-12));
  CHECK(r.window() == doctest::Approx(4.0).epsilon(1e-12));
}

TEST_CASE("sim: one-way latency L costs exactly two L per block without prefetch") {
  // Result k reaches the master at (2k+1) L + k c; the first assignment is at L.
  const double L = 0.01, c = 0.5;
  CostMap map = uniform_map(64, 64, 4, c / 16);
  SimResult r = simulate(map, {worker(1, L), worker(1, L)}, options(64, 64, 16));
  REQUIRE(r.completed);
  CHECK(r.makespan == doctest::Approx(17 * L + 8 * c).epsilon(1e-9));
  CHECK(r.window() == doctest::Approx(16 * L + 8 * c).epsilon(1e-9));
}

TEST_CASE("sim: prefetch hides the round trip") {
  const double L = 0.01, c = 0.5;
  CostMap map = uniform_map(64, 64, 4, c / 16);
  SimResult r = simulate(map, {worker(1, L, 1), worker(1, L, 1)}, options(64, 64, 16));
  REQUIRE(r.completed);
  // Only the first assignment's trip and the last result's are exposed.
  CHECK(r.makespan == doctest::Approx(3 * L + 8 * c).epsilon(1e-9));
}

TEST_CASE("quota clock: CFS bandwidth control, budget per period, idle time within a period free") {
  QuotaClock off;
  CHECK(off.run(1.0, 0.5) == 1.0 + 0.5);
  // 4 ms of CPU per 10 ms period (0.4 cores).
  QuotaClock q(0.010, 0.004);
  CHECK(q.run(0.0, 0.003) == doctest::Approx(0.003));  // within the budget: full speed
  // 2 ms more from 5 ms: 1 ms left in this period, then throttled until 10 ms, then 1 ms.
  CHECK(q.run(0.005, 0.002) == doctest::Approx(0.011));
  // A long job runs at 0.4 of full speed: 40 ms of CPU from 20 ms take ten periods' budgets,
  // the last ending 4 ms into the period from 110 ms.
  CHECK(q.run(0.020, 0.040) == doctest::Approx(0.114));
  // A job that starts late in a period gets what is left of it, not a whole budget.
  QuotaClock r(0.010, 0.004);
  CHECK(r.run(0.0085, 0.003) == doctest::Approx(0.0115));  // 1.5 ms, then 1.5 ms of the next
}

TEST_CASE("sim: under a CPU quota, gaps between blocks shorter than the throttled time cost nothing") {
  // 16 blocks of 10 ms CPU each; 0.5 cores in periods of 10 ms: 320 ms for the CPU alone.
  CostMap map = uniform_map(64, 64, 4, 0.010 / 16);
  SimWorkerSpec w = worker(1, 0.0005);  // a 1 ms round trip per block without prefetch
  w.cpu_quota = 0.5;
  w.quota_period = 0.010;
  SimResult r = simulate(map, {w}, options(64, 64, 16));
  REQUIRE(r.completed);
  // Each block runs 5 ms in one period and 5 ms in the next; the round trip falls in time the
  // worker would have been throttled anyway: two periods per block, or a little less for the
  // first one, which starts mid-period.
  CHECK(r.window() <= doctest::Approx(0.32 + 0.001));
  CHECK(r.window() > 0.30);
  // A worker of half the speed without a quota pays every round trip: 16 x (20 ms + 1 ms).
  SimWorkerSpec free = worker(0.5, 0.0005);
  SimResult slow = simulate(map, {free}, options(64, 64, 16));
  CHECK(slow.window() == doctest::Approx(0.32 + 16 * 0.001).epsilon(1e-9));
  // The bound knows the quota: 0.5 of the thread speed over the long run.
  CHECK(r.bound.plain == doctest::Approx(0.32).epsilon(0.02));
}

TEST_CASE("sim: a worker twice as fast takes two thirds of the blocks") {
  CostMap map = uniform_map(96, 96, 4, 0.25 / 64);  // 9 blocks of 32x32 at 0.25 s
  SimResult r = simulate(map, {worker(2), worker(1)}, options(96, 96, 32));
  REQUIRE(r.completed);
  // Fast: 0.125 s per block, slow: 0.25 s. By t = 0.75 the fast one has finished 6, the slow 3.
  CHECK(r.makespan == doctest::Approx(0.75).epsilon(1e-12));
}

TEST_CASE("sim: the per-block overhead is worker CPU (divided by speed) unless the worker's own is given") {
  // One worker, 16 blocks of 0.5 s of work, no latency: makespan = 16 (0.5 + overhead) / speed.
  CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  SimOptions o = options(64, 64, 16);
  o.per_block_overhead = 0.01;
  SimResult half = simulate(map, {worker(0.5)}, o);
  REQUIRE(half.completed);
  CHECK(half.makespan == doctest::Approx(16 * (0.5 + 0.01) / 0.5).epsilon(1e-9));
  SimWorkerSpec measured = worker(0.5);
  measured.block_overhead = 0.1;  // wall seconds per block, as measured on that worker
  SimResult m = simulate(map, {measured}, o);
  REQUIRE(m.completed);
  CHECK(m.makespan == doctest::Approx(16 * (0.5 / 0.5 + 0.1)).epsilon(1e-9));
  // The bound counts, per block, the least overhead any worker spends (in work units).
  CHECK(m.work == doctest::Approx(16 * 0.5 + 16 * 0.1 * 0.5).epsilon(1e-9));
}

TEST_CASE("sim: same seed, same run, another seed draws other jitter") {
  CostMap map = uniform_map(128, 96, 4, 0.001);
  ClusterSpec spec = parse_cluster_spec(
      "[[group]]\ncount = 5\nspeed = [0.2, 1.0]\nlatency_ms = [1, 20]\njitter_ms = 2\n", "test.toml");
  SimOptions o = options(128, 96, 32, PolicyKind::seed, 2);
  o.scheduler.base_wait = 0.05;
  SimResult a = simulate(map, expand_cluster(spec, 7), o);
  SimResult b = simulate(map, expand_cluster(spec, 7), o);
  REQUIRE(a.completed);
  CHECK(a.stats_json == b.stats_json);
  CHECK(a.makespan == b.makespan);
  o.seed = 8;
  SimResult c = simulate(map, expand_cluster(spec, 8), o);
  CHECK(c.stats_json != a.stats_json);
}

TEST_CASE("sim: a worker that fails is declared dead and its blocks are re-rendered") {
  CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  SimWorkerSpec doomed = worker(1);
  doomed.fail = 1.2;  // silent from here on, holding a block
  SimOptions o = options(64, 64, 16);
  SimResult r = simulate(map, {worker(1), doomed}, o);
  REQUIRE(r.completed);
  CHECK(r.dead_workers == 1);
  CHECK(r.blocks == 16);
  // It finished 2 blocks; the survivor renders the other 14 (7 s) and loses nothing else.
  CHECK(r.makespan == doctest::Approx(7.0).epsilon(1e-12));
  CHECK(r.stats_json.find("\"died\": true") != std::string::npos);
}

TEST_CASE("sim: the seed policy halves a slow worker's blocks, as the scheduler decides") {
  CostMap map = uniform_map(128, 128, 4, 0.01);  // a 32x32 block costs 0.64 s at speed 1
  SimOptions o = options(128, 128, 32, PolicyKind::seed, 2);
  o.scheduler.base_wait = 0.5;
  SimResult r = simulate(map, {worker(1), worker(0.1)}, o);
  REQUIRE(r.completed);
  CHECK(r.halvings >= 2);  // 6.4 s per block on the slow one: halved to 16, then 8
  CHECK(r.stats_json.find("\"to\": 16") != std::string::npos);
}

TEST_CASE("sim: no workers or all lost ends without completing, never hangs") {
  CostMap map = uniform_map(32, 32, 4, 0.01);
  SimOptions o = options(32, 32, 16);
  o.time_limit = 100;
  SimResult none = simulate(map, {}, o);
  CHECK_FALSE(none.completed);
  SimWorkerSpec doomed = worker(1);
  doomed.fail = 0.05;
  SimResult lost = simulate(map, {doomed}, o);
  CHECK_FALSE(lost.completed);
  CHECK(lost.dead_workers == 1);
}

TEST_CASE("cluster file: ranges, defaults and located errors") {
  ClusterSpec s = parse_cluster_spec(
      "[network]\nlatency_ms = 5\n\n[[group]]\nname = \"lab\"\ncount = 3\n\n[[group]]\ncount = 2\nspeed = [0.1, 1]\n"
      "latency_ms = 50\nfail = [1, 2]\n",
      "c.toml");
  REQUIRE(s.groups.size() == 2);
  CHECK(s.total_workers() == 5);
  auto w = expand_cluster(s, 3);
  REQUIRE(w.size() == 5);
  CHECK(w[0].latency == doctest::Approx(0.005));
  CHECK(w[0].fail == -1);
  CHECK(w[4].latency == doctest::Approx(0.05));
  CHECK(w[4].speed >= 0.1);
  CHECK(w[4].speed <= 1.0);
  CHECK(w[4].fail >= 1.0);
  CHECK(w[0].block_overhead < 0);  // not given: the cluster's per_block_overhead_ms / speed
  auto measured = expand_cluster(parse_cluster_spec("[[group]]\nblock_overhead_ms = 2.5\n", "m.toml"), 1);
  CHECK(measured[0].block_overhead == doctest::Approx(0.0025));
  auto error_of = [](const std::string& text) {
    try {
      parse_cluster_spec(text, "bad.toml");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("[[group]]\ncount = 2\nsped = 1\n").find("bad.toml:3") != std::string::npos);
  CHECK(error_of("[[group]]\ncount = 2\nsped = 1\n").find("speed") != std::string::npos);
  CHECK(error_of("[[group]]\ncount = 0\n").find("count") != std::string::npos);
  CHECK(error_of("[[group]]\nspeed = [2, 1]\n").find("reversed") != std::string::npos);
  CHECK(error_of("[[group]]\nspeed = nan\n").find("speed") != std::string::npos);
  CHECK(error_of("[network]\nlatency_ms = -1\n[[group]]\n").find("latency_ms") != std::string::npos);
  CHECK(error_of("").find("no workers") != std::string::npos);
  CHECK(error_of("[[group]]\nblock_overhead_ms = -1\n").find("block_overhead_ms") != std::string::npos);
  auto capped = expand_cluster(parse_cluster_spec("[[group]]\ncpu_quota = 0.25\nquota_period_ms = 10\n", "q.toml"), 1);
  CHECK(capped[0].cpu_quota == doctest::Approx(0.25));
  CHECK(capped[0].quota_period == doctest::Approx(0.010));
  CHECK(error_of("[[group]]\ncpu_quota = 0.05\nquota_period_ms = 10\n").find("at least 1 ms") != std::string::npos);
  CHECK(error_of("[[group]]\ncpu_quota = [0, 1]\n").find("above 0") != std::string::npos);
}

TEST_CASE("sim: its scheduler trace replays to the same decisions, and a changed trace is caught") {
  CostMap map = uniform_map(128, 128, 4, 0.01);
  SimOptions o = options(128, 128, 32, PolicyKind::adaptive, 2);
  o.scheduler.base_wait = 0.3;
  std::ostringstream trace;
  o.trace = &trace;
  SimWorkerSpec doomed = worker(0.5, 0.002, 1);
  doomed.fail = 2.0;
  SimResult r = simulate(map, {worker(1, 0.001, 1), worker(0.1, 0.02, 1), doomed}, o);
  REQUIRE(r.completed);
  REQUIRE(r.halvings > 0);
  REQUIRE(r.dead_workers == 1);
  std::istringstream replay(trace.str());
  CHECK(replay_trace(replay).ok());
  // The check can fail: ask for one more block in the first request than was recorded.
  std::string text = trace.str();
  size_t at = text.find("\nR ");
  REQUIRE(at != std::string::npos);
  size_t colon = text.find(" : ", at);
  size_t credits = text.rfind(' ', colon - 1) + 1;
  text.replace(credits, colon - credits, std::to_string(std::stoi(text.substr(credits, colon - credits)) + 1));
  std::istringstream changed(text);
  CHECK(replay_trace(changed).message().find("recorded") != std::string::npos);
}

TEST_CASE("sim: a factoring run's trace replays, with or without a block cost model (its answers are in the trace)") {
  CostMap map = uniform_map(128, 128, 4, 0.01);
  map.at(1, 5, 5) = 0.5;  // one expensive tile
  for (bool with_costs : {false, true}) {
    CAPTURE(with_costs);
    SimOptions o = options(128, 128, 64, PolicyKind::factoring, 2);
    if (with_costs) o.scheduler.block_cost = [&map](const Block& b) { return map.cost(b); };
    std::ostringstream trace;
    o.trace = &trace;
    SimResult r = simulate(map, {worker(1, 0.001, 1), worker(0.2, 0.02, 1), worker(0.5, 0.005, 1)}, o);
    REQUIRE(r.completed);
    CHECK(r.makespan >= r.bound.honest());
    std::istringstream replay(trace.str());
    Status replayed = replay_trace(replay);
    CHECK_MESSAGE(replayed.ok(), replayed.message());
    const std::string text = trace.str();
    const size_t k = text.find("\nK ");
    CHECK((k != std::string::npos) == with_costs);
    if (!with_costs) continue;
    // Without one of its costs the replay says which block it lacks, instead of guessing.
    const size_t end = text.find('\n', k + 1);
    std::istringstream missing(text.substr(0, k) + text.substr(end));
    Status lacking = replay_trace(missing);
    CHECK_FALSE(lacking.ok());
    CHECK_MESSAGE(lacking.message().find("the trace holds no cost for block") != std::string::npos, lacking.message());
    // Another cost for the expensive tile's block: the replay's decisions differ, and it says so.
    std::string changed = text;
    for (size_t at = changed.find("\nK "); at != std::string::npos; at = changed.find("\nK ", at + 1)) {
      const size_t stop = changed.find('\n', at + 1);
      const size_t space = changed.rfind(' ', stop);
      changed.replace(space + 1, stop - space - 1, "1000");  // every block suddenly costly
    }
    std::istringstream other(changed);
    Status differs = replay_trace(other);
    CHECK_FALSE(differs.ok());
  }
}

TEST_CASE("sim: a trace header the scheduler refuses is an error, not an exception") {
  std::istringstream zero_wait("config 64 64 32 4 0 2 1 1 3 8 1 1\n");
  Status s = replay_trace(zero_wait);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("waiting time") != std::string::npos);
}

TEST_CASE("sim: renderer failures are counted by the master's own rules: a broken worker sits out, the rest finish") {
  CostMap map = uniform_map(64, 64, 4, 0.01);
  SimWorkerSpec broken = worker(1);
  broken.render_failures = 1.0;
  SimResult r = simulate(map, {worker(1), worker(1), broken}, options(64, 64, 16));
  CHECK(r.completed);
  CHECK(r.failure.empty());
  CHECK(r.benched_workers == 1);
  // Benched after k_max_failures_in_row failures in a row; no block failed on it more than that.
  CHECK(r.failed_blocks >= static_cast<uint64_t>(k_max_failures_in_row));
  CHECK(r.failed_blocks <= static_cast<uint64_t>(k_max_failures_in_row) + 1);
  CHECK(r.blocks == 16);
  CHECK(r.stats_json.find("\"failed_blocks\": " + std::to_string(r.failed_blocks)) != std::string::npos);
  // The same cluster without the broken worker's failures draws nothing else differently.
  broken.render_failures = 0;
  SimResult healthy = simulate(map, {worker(1), worker(1), broken}, options(64, 64, 16));
  CHECK(healthy.completed);
  CHECK(healthy.failed_blocks == 0);
}

TEST_CASE("sim: when every worker's renderer fails, the job ends without its image, saying why as the master does") {
  CostMap map = uniform_map(64, 64, 4, 0.01);
  SimWorkerSpec broken = worker(1);
  broken.render_failures = 1.0;
  // Two workers: both are benched before any block has failed k_max_block_failures times.
  SimResult two = simulate(map, {broken, broken}, options(64, 64, 16));
  CHECK_FALSE(two.completed);
  CHECK(two.benched_workers == 2);
  CHECK(two.failure == "no worker left to render the job: every connected worker sits it out");
  // One block and six workers: it fails on each in turn and gives up at its k_max_block_failures-th.
  SimResult six = simulate(uniform_map(16, 16, 4, 0.01), std::vector<SimWorkerSpec>(6, broken), options(16, 16, 16));
  CHECK_FALSE(six.completed);
  CHECK(six.failure.find("failed " + std::to_string(k_max_block_failures) + " times") != std::string::npos);
}

TEST_CASE("sim: a cluster file's render_failures is a fraction, and is refused behind a site") {
  CHECK(expand_cluster(parse_cluster_spec("[[group]]\ncount = 2\nrender_failures = 0.25\n", "f.toml"), 1)[1]
            .render_failures == doctest::Approx(0.25));
  CHECK_THROWS_WITH(parse_cluster_spec("[[group]]\nrender_failures = 1.5\n", "f.toml"),
                    doctest::Contains("render_failures"));
  CHECK_THROWS_WITH(
      parse_cluster_spec("[[site]]\nname = \"s\"\n[[group]]\nsite = \"s\"\nrender_failures = 0.1\n", "f.toml"),
      doctest::Contains("not modelled for workers behind a site"));
}

TEST_SUITE_END();
