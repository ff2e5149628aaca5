// Several jobs sharing the simulated farm (simulate_jobs): the service's JobDispatch decides, as
// under `farm serve`; exact timelines on hand-computable clusters, and the jobs file's errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "farm/uniform_cost_map.h"
#include "sim/jobs_spec.h"
#include "sim/simulator.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

SimWorkerSpec worker(const std::string& name, double latency = 0, int prefetch = 0) {
  SimWorkerSpec w;
  w.name = name;
  w.speed = 1;
  w.threads = 1;
  w.prefetch = prefetch;
  w.startup = 0;
  w.latency = latency;
  w.bandwidth = 0;
  return w;
}

SimOptions service_options() {
  SimOptions o;
  o.per_block_overhead = 0;
  o.master_message_cost = 0;
  return o;
}

// 64x64 in fixed 16x16 blocks: 16 blocks of 0.5 s at speed 1 (8 s of work) with the map below.
SimJob job(const std::string& name, const CostMap& costs, int priority, double submit = 0, double load = 0.25) {
  SimJob j;
  j.name = name;
  j.costs = &costs;
  j.scheduler.width = costs.width();
  j.scheduler.height = costs.height();
  j.scheduler.frames = {1};
  j.scheduler.block_size = 16;
  j.scheduler.policy = PolicyKind::fixed;
  j.scheduler.base_wait = 100;
  j.priority = priority;
  j.submit = submit;
  j.load = load;
  return j;
}

const SimJobResult& named(const SimResult& r, const std::string& name) {
  for (const SimJobResult& j : r.jobs)
    if (j.name == name) return j;
  FAIL("no job " << name);
  return r.jobs.front();
}

}  // namespace

TEST_CASE("sim jobs: two workers, priorities 1, 5, 5 at once: the fives share the workers and finish before the one starts") {
  const CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  const SimResult r = simulate_jobs({job("low", map, 1), job("a", map, 5), job("b", map, 5)},
                                    {worker("w1"), worker("w2")}, service_options());
  REQUIRE(r.completed);
  REQUIRE(r.jobs.size() == 3);
  const SimJobResult &low = named(r, "low"), &a = named(r, "a"), &b = named(r, "b");
  // Each five gets one worker at once (equal shares), loads its scene (0.25 s) and renders its 16
  // blocks of 0.5 s back to back: both end at 0.25 + 8 s.
  CHECK(a.start == doctest::Approx(0.25));
  CHECK(b.start == doctest::Approx(0.25));
  CHECK(a.finish == doctest::Approx(8.25));
  CHECK(b.finish == doctest::Approx(8.25));
  CHECK(a.blocks == 16);
  CHECK(b.blocks == 16);
  // Half the worker-seconds each while both ran: one worker each, the whole time.
  CHECK(a.worker_seconds == doctest::Approx(8.25));
  CHECK(b.worker_seconds == doctest::Approx(8.25));
  // The one gets no block before both fives are done; then both workers load it and share it.
  CHECK(low.start >= std::max(a.finish, b.finish));
  CHECK(low.start == doctest::Approx(8.5));
  CHECK(low.finish == doctest::Approx(8.5 + 4.0));
  CHECK(low.workers == 2);
  CHECK(r.makespan == doctest::Approx(12.5));
  CHECK(r.stats_json.find("\"jobs\"") != std::string::npos);
  CHECK(r.stats_json.find("\"name\": \"low\"") != std::string::npos);
}

TEST_CASE("sim jobs: unequal equal-priority jobs: the shorter one's worker moves to the longer one when it ends") {
  const CostMap small = uniform_map(64, 64, 4, 0.5 / 16);  // 8 s of work
  const CostMap big = uniform_map(64, 64, 4, 1.0 / 16);    // 16 s of work
  const SimResult r = simulate_jobs({job("small", small, 5), job("big", big, 5)}, {worker("w1"), worker("w2")},
                                    service_options());
  REQUIRE(r.completed);
  const SimJobResult &s = named(r, "small"), &g = named(r, "big");
  CHECK(s.finish == doctest::Approx(8.25));
  CHECK(s.worker_seconds == doctest::Approx(8.25));
  // big: 8 blocks of 1 s by 8.25 on one worker; the other arrives at 8.25 (+0.25 load): 8 blocks
  // left for two workers, 4 each: w2 ends at 12.25, w1 at 8.5 + 4 = 12.5.
  CHECK(g.finish == doctest::Approx(12.5));
  CHECK(g.workers == 2);
  CHECK(g.worker_seconds == doctest::Approx(12.5 + (12.5 - 8.25)));
}

TEST_CASE("sim jobs: a higher-priority job submitted mid-run gets every worker within one block time plus a round trip (two with one block prefetched)") {
  const CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  const double L = 0.005;
  const double block = 0.5;
  for (int prefetch : {0, 1}) {
    CAPTURE(prefetch);
    const SimResult r = simulate_jobs({job("low", map, 1), job("high", map, 9, 3.1)},
                                      {worker("w1", L, prefetch), worker("w2", L, prefetch)}, service_options());
    REQUIRE(r.completed);
    const SimJobResult &low = named(r, "low"), &high = named(r, "high");
    CHECK(high.workers == 2);
    const double takeover = high.every_worker - high.submit;
    // A worker is moved at its first request once it holds no block of the low job: with no
    // prefetch, when the block it renders is done; with one block prefetched, after that one too.
    CHECK(takeover >= 0);
    CHECK(takeover <= (1 + prefetch) * block + 2 * L + 1e-9);
    if (prefetch == 0) {
      // The low job's k-th result reaches the service at 0.25 + 3L + k (0.5 + 2L) (hello, welcome,
      // load, request; then a block and a round trip each): the first after 3.1 is k = 6, 3.325.
      CHECK(high.every_worker == doctest::Approx(0.25 + 3 * L + 6 * (block + 2 * L)));
    }
    // The high job runs alone, then the low job gets its workers back.
    CHECK(high.finish < low.finish);
    CHECK(high.finish - high.every_worker <= 4.0 + 0.25 + 16 * 2 * L + 4 * L);
  }
}

TEST_CASE("sim jobs: one job under the service costs a master's run plus the welcome's round trip") {
  const CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  for (double L : {0.0, 0.01}) {
    CAPTURE(L);
    SimWorkerSpec w1 = worker("w1", L), w2 = worker("w2", L);
    w1.startup = w2.startup = 0.3;
    SimOptions master = service_options();
    SimJob only = job("only", map, 0, 0, -1);  // a worker's startup as its load
    master.scheduler = only.scheduler;
    const SimResult m = simulate(map, {w1, w2}, master);
    const SimResult s = simulate_jobs({only}, {w1, w2}, service_options());
    REQUIRE(m.completed);
    REQUIRE(s.completed);
    CHECK(s.blocks == m.blocks);
    // The master's worker asks at join + startup; the service's says hello at its join, is
    // welcomed one round trip later, then loads for its startup.
    CHECK(s.makespan == doctest::Approx(m.makespan + 2 * L));
    CHECK(s.jobs.front().finish == doctest::Approx(s.makespan));
  }
}

TEST_CASE("sim jobs: a paused job's workers go to the next job and come back when it is resumed, and a raised priority takes over") {
  const CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  SimJob first = job("first", map, 5);
  first.pause = 2.1;
  first.resume = 4.1;
  const SimResult r = simulate_jobs({first, job("second", map, 1)}, {worker("w1"), worker("w2")}, service_options());
  REQUIRE(r.completed);
  const SimJobResult &a = named(r, "first"), &b = named(r, "second");
  // Paused at 2.1: its leases go back at once, both workers move (load 0.25) to the second job.
  CHECK(b.start == doctest::Approx(2.1 + 0.25));
  // Resumed at 4.1: each worker moves back once its block of the second is done (4.35 and 4.35).
  CHECK(a.finish > 4.1);
  CHECK(b.finish > a.finish);
  CHECK(a.blocks == 16);
  CHECK(b.blocks == 16);

  SimJob later = job("later", map, 1);
  later.reprioritise = 1.0;
  later.new_priority = 9;
  const SimResult p = simulate_jobs({job("now", map, 5), later}, {worker("w1"), worker("w2")}, service_options());
  REQUIRE(p.completed);
  // From 1.0 the later job outranks: it starts within a block time and ends first.
  CHECK(named(p, "later").start <= 1.0 + 0.5 + 0.25 + 1e-9);
  CHECK(named(p, "later").finish < named(p, "now").finish);
}

TEST_CASE("sim jobs: no worker moves to a job being set up, and those that asked are served the moment it is") {
  const CostMap map = uniform_map(64, 64, 4, 0.5 / 16);
  SimJob high = job("high", map, 9, 3.1);
  high.setup = 0.6;
  const SimResult r = simulate_jobs({job("low", map, 1), high}, {worker("w1"), worker("w2")}, service_options());
  REQUIRE(r.completed);
  const SimJobResult& h = named(r, "high");
  // Both workers ask at 3.25 (their low blocks done): the high job's setup starts then and ends at
  // 3.85; they stay where they are, idle, and are served again when it ends (not a heartbeat
  // interval later, at their next request): both join at 3.85, then load for 0.25 s.
  CHECK(h.first_worker == doctest::Approx(3.85));
  CHECK(h.every_worker == doctest::Approx(3.85));
  CHECK(h.start == doctest::Approx(4.1));
  CHECK(h.finish == doctest::Approx(4.1 + 4.0));
  CHECK(named(r, "low").blocks == 16);
}

TEST_CASE("sim jobs file: keys, defaults, and errors naming the file, the line and the key") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "farm_sim_jobs_test";
  fs::create_directories(dir);
  { std::ofstream(dir / "a.costs") << "x"; }
  const std::string file = (dir / "jobs.toml").string();
  JobsSpec s = parse_jobs_spec(
      "[[job]]\nname = \"a\"\ncost_map = \"a.costs\"\npriority = 5\nsubmit = 2\nwork_factor = 4\nframes = 2\n"
      "policy = \"seed\"\nblock = 32\nload_ms = 300\nsetup_ms = 400\npause = 3\nresume = 4\nreprioritise_at = 5\nnew_priority = 9\n\n[[job]]\n",
      file);
  REQUIRE(s.jobs.size() == 2);
  CHECK(s.jobs[0].cost_map == (dir / "a.costs").string());  // relative to the file's folder
  CHECK(s.jobs[0].priority == 5);
  CHECK(s.jobs[0].submit == doctest::Approx(2));
  CHECK(s.jobs[0].work_factor == doctest::Approx(4));
  CHECK(s.jobs[0].frames == 2);
  REQUIRE(s.jobs[0].policy);
  CHECK(*s.jobs[0].policy == PolicyKind::seed);
  CHECK(s.jobs[0].block == 32);
  CHECK(!s.jobs[1].policy);
  CHECK(s.jobs[0].load == doctest::Approx(0.3));
  CHECK(s.jobs[0].setup == doctest::Approx(0.4));
  CHECK(s.jobs[0].pause == doctest::Approx(3));
  CHECK(s.jobs[0].resume == doctest::Approx(4));
  CHECK(s.jobs[0].reprioritise_at == doctest::Approx(5));
  CHECK(s.jobs[0].new_priority == 9);
  CHECK(s.jobs[1].name == "job2");
  CHECK(s.jobs[1].cost_map.empty());
  CHECK(s.jobs[1].load < 0);
  auto error_of = [&](const std::string& text) {
    try {
      parse_jobs_spec(text, file);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = error_of("[[job]]\nname = \"a\"\nprioriti = 3\n");
  CHECK(unknown.find("jobs.toml:3") != std::string::npos);
  CHECK(unknown.find("prioriti") != std::string::npos);
  const std::string range = error_of("[[job]]\npriority = 1001\n");
  CHECK(range.find("jobs.toml:2") != std::string::npos);
  CHECK(range.find("priority") != std::string::npos);
  const std::string missing = error_of("[[job]]\nname = \"m\"\ncost_map = \"nowhere.costs\"\n");
  CHECK(missing.find("jobs.toml:3") != std::string::npos);
  CHECK(missing.find("cost_map") != std::string::npos);
  CHECK(missing.find("nowhere.costs") != std::string::npos);
  CHECK(error_of("").find("no jobs") != std::string::npos);
  CHECK(error_of("[[job]]\nname = \"a\"\n[[job]]\nname = \"a\"\n").find("duplicate") != std::string::npos);
  CHECK(error_of("[[job]]\nresume = 3\n").find("resume") != std::string::npos);
  CHECK(error_of("[[job]]\nnew_priority = 3\n").find("reprioritise_at") != std::string::npos);
  CHECK(error_of("[[job]]\nsubmit = -1\n").find("submit") != std::string::npos);
  CHECK(error_of("[group]\n").find("group") != std::string::npos);
  CHECK(error_of("[[job]]\npolicy = \"fast\"\n").find("jobs.toml:2") != std::string::npos);
  CHECK(error_of("[[job]]\nblock = 0\n").find("block") != std::string::npos);
  fs::remove_all(dir);
}

TEST_SUITE_END();
