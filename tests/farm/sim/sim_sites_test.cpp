// The sites model of `farm sim`: [[site]] in the cluster file, a relay per site on the real
// RelayQueue, and the master's supervisor between relays (seed 002).
#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "farm/uniform_cost_map.h"
#include "sim/simulator.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

SimOptions options(int width, int height, int block) {
  SimOptions o;
  o.scheduler.width = width;
  o.scheduler.height = height;
  o.scheduler.block_size = block;
  o.scheduler.policy = PolicyKind::fixed;
  o.scheduler.base_wait = 100;
  return o;
}

std::string error_of(const std::string& text) {
  try {
    parse_cluster_spec(text, "bad.toml");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

// A number field of the stats JSON's summary ("key": value).
double summary_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + key.size() + 4));
}

// How many accepted blocks of the stats JSON cover each pixel.
std::vector<int> accepted_coverage(const std::string& json, int width, int height) {
  std::vector<int> covered(static_cast<size_t>(width) * static_cast<size_t>(height), 0);
  std::istringstream in(json);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("\"outcome\": \"accepted\"") == std::string::npos) continue;
    int frame = 0, x = 0, y = 0, w = 0, h = 0;
    REQUIRE(std::sscanf(line.c_str(), " {\"frame\": %d, \"x\": %d, \"y\": %d, \"width\": %d, \"height\": %d", &frame, &x, &y, &w,
                        &h) == 5);
    for (int j = y; j < y + h; ++j)
      for (int i = x; i < x + w; ++i) ++covered[static_cast<size_t>(j) * static_cast<size_t>(width) + static_cast<size_t>(i)];
  }
  return covered;
}

// Two sites behind relays over a WAN of `wan_ms`, a fast one and one `slow` times slower.
std::string two_sites(double wan_ms, double slow) {
  return "[[site]]\nname = \"fast\"\nlatency_ms = " + std::to_string(wan_ms) + "\nbandwidth_mbit = 100\n\n" +
         "[[site]]\nname = \"slow\"\nlatency_ms = " + std::to_string(wan_ms) + "\n\n" +
         "[[group]]\nname = \"f\"\nsite = \"fast\"\ncount = 3\nstartup = 0\nlatency_ms = 0.1\n\n" +
         "[[group]]\nname = \"s\"\nsite = \"slow\"\ncount = 3\nstartup = 0\nlatency_ms = 0.1\nspeed = " +
         std::to_string(1.0 / slow) + "\n";
}

// The same workers straight to the master: their latency is the WAN's plus the LAN's.
std::string two_groups_flat(double wan_ms, double slow) {
  return "[[group]]\nname = \"f\"\ncount = 3\nstartup = 0\nlatency_ms = " + std::to_string(wan_ms + 0.1) + "\n\n" +
         "[[group]]\nname = \"s\"\ncount = 3\nstartup = 0\nlatency_ms = " + std::to_string(wan_ms + 0.1) +
         "\nspeed = " + std::to_string(1.0 / slow) + "\n";
}

SimResult run(const std::string& cluster, SimOptions o, const CostMap& map) {
  const ClusterSpec spec = parse_cluster_spec(cluster, "c.toml");
  return simulate(map, expand_cluster(spec, 7), o, expand_sites(spec, 7));
}

}  // namespace

TEST_CASE("cluster file: [[site]]s and groups placed at them, with located errors") {
  const ClusterSpec s = parse_cluster_spec(
      "[[site]]\nname = \"east\"\nlatency_ms = [10, 20]\nbandwidth_mbit = 50\n\n[[site]]\nname = \"west\"\nspare = 2\n\n"
      "[[group]]\ncount = 2\nsite = \"west\"\nlatency_ms = 0.2\n\n[[group]]\ncount = 1\n\n[[group]]\nsite = \"east\"\n",
      "c.toml");
  REQUIRE(s.sites.size() == 2);
  const auto sites = expand_sites(s, 3);
  REQUIRE(sites.size() == 2);
  CHECK(sites[0].name == "east");
  CHECK(sites[0].latency >= 0.010);
  CHECK(sites[0].latency <= 0.020);
  CHECK(sites[0].bandwidth == doctest::Approx(50e6 / 8));
  CHECK(sites[0].spare == 4);
  CHECK(sites[1].spare == 2);
  CHECK(sites[1].latency == doctest::Approx(0.0001));
  const auto w = expand_cluster(s, 3);
  REQUIRE(w.size() == 4);
  CHECK(w[0].site == 1);
  CHECK(w[0].latency == doctest::Approx(0.0002));  // the LAN link to its relay
  CHECK(w[1].site == 1);
  CHECK(w[2].site == -1);  // straight to the master
  CHECK(w[3].site == 0);
  // Adding sites draws no other worker.
  const auto flat = expand_cluster(parse_cluster_spec("[[group]]\ncount = 2\nspeed = [0.1, 1]\n", "f.toml"), 5);
  const auto placed = expand_cluster(
      parse_cluster_spec("[[site]]\nname = \"a\"\nlatency_ms = [1, 9]\n[[group]]\ncount = 2\nspeed = [0.1, 1]\nsite = \"a\"\n", "p.toml"),
      5);
  CHECK(flat[1].speed == placed[1].speed);

  const std::string unknown = error_of("[[site]]\nname = \"a\"\n[[group]]\nsite = \"b\"\n");
  CHECK(unknown.find("bad.toml:4") != std::string::npos);
  CHECK(unknown.find("unknown site 'b'") != std::string::npos);
  const std::string duplicate = error_of("[[site]]\nname = \"a\"\n[[site]]\nname = \"a\"\n[[group]]\n");
  CHECK(duplicate.find("bad.toml:4") != std::string::npos);
  CHECK(duplicate.find("duplicate site 'a'") != std::string::npos);
  CHECK(error_of("[[site]]\nname = \"a\"\nlatency_ms = -5\n[[group]]\n").find("latency_ms") != std::string::npos);
  CHECK(error_of("[[site]]\nname = \"a\"\nlatency_ms = [9, 1]\n[[group]]\n").find("reversed") != std::string::npos);
  CHECK(error_of("[[site]]\nname = \"a\"\nbandwidth = 5\n[[group]]\n").find("bandwidth") != std::string::npos);
  CHECK(error_of("[[site]]\nname = \"\"\n[[group]]\n").find("must not be empty") != std::string::npos);
  CHECK(error_of("[[site]]\nname = \"a\"\nspare = -1\n[[group]]\n").find("spare") != std::string::npos);
  CHECK(error_of("site = 3\n[[group]]\n").find("[[site]]") != std::string::npos);
  CHECK(error_of("[[group]]\nsite = 3\n").find("site") != std::string::npos);
}

TEST_CASE("sim sites: two sites complete, every pixel accepted once, relays are the master's participants") {
  const CostMap map = uniform_map(128, 96, 8, 0.02);
  const SimResult r = run(two_sites(20, 2), options(128, 96, 16), map);
  REQUIRE(r.completed);
  for (const int n : accepted_coverage(r.stats_json, 128, 96)) REQUIRE(n == 1);
  // Two participants, each a relay for three site workers; the site workers are not the master's.
  CHECK(r.stats_json.find("\"name\": \"fast\", \"threads\": 3, \"site_workers\": 3") != std::string::npos);
  CHECK(r.stats_json.find("\"name\": \"slow\", \"threads\": 3, \"site_workers\": 3") != std::string::npos);
  CHECK(r.stats_json.find("\"name\": \"f-1\"") == std::string::npos);
  CHECK(summary_number(r.stats_json, "sites") == 2);
  CHECK(summary_number(r.stats_json, "messages_in") == r.messages_in);
  CHECK(r.messages_in > 0);
  // The bound counts each site worker's way to the master: LAN and WAN.
  CHECK(r.makespan >= r.bound.honest());
}

TEST_CASE("sim sites: a dry site gets unstarted blocks recalled from a slow one, and none with --no-recall") {
  const CostMap map = uniform_map(128, 128, 8, 0.02);  // 64 blocks of 16 x 16, 0.08 s each at speed 1
  // No copies: with them the master keeps a dry relay's spare filled with copies, so its site
  // never runs empty (the "empty" trigger needs a request with nothing queued).
  auto no_copies = [] {
    SimOptions o = options(128, 128, 16);
    o.scheduler.max_copies = 1;
    return o;
  };
  const SimResult with = run(two_sites(20, 4), no_copies(), map);
  REQUIRE(with.completed);
  CHECK(with.recalls > 0);
  CHECK(with.recalled_blocks > 0);
  CHECK(summary_number(with.stats_json, "recalls") == with.recalls);
  CHECK(summary_number(with.stats_json, "recalled_blocks") == with.recalled_blocks);
  CHECK(with.stats_json.find("\"outcome\": \"recalled\"") != std::string::npos);
  for (const int n : accepted_coverage(with.stats_json, 128, 128)) REQUIRE(n == 1);

  SimOptions off = no_copies();
  off.recall = false;
  const SimResult without = run(two_sites(20, 4), off, map);
  REQUIRE(without.completed);
  CHECK(without.recalls == 0);
  CHECK(without.recalled_blocks == 0);
  CHECK(summary_number(without.stats_json, "recalls") == 0);
  // Moving blocks off the slow site shortens the run.
  CHECK(with.makespan < without.makespan);

  // The second trigger fires with copies on too (a site below half its ideal holding).
  SimOptions below = options(128, 128, 16);
  below.recall_below = 0.5;
  const SimResult early = run(two_sites(20, 4), below, map);
  REQUIRE(early.completed);
  CHECK(early.recalls > 0);
  // With copies and only the "empty" trigger recalls are rare (the master fills a dry relay's
  // spare with copies, so it seldom asks with nothing queued); copies and recalls together still
  // cover every pixel once.
  const SimResult fed = run(two_sites(20, 4), options(128, 128, 16), map);
  REQUIRE(fed.completed);
  CHECK(fed.recalls <= with.recalls);
  for (const int n : accepted_coverage(fed.stats_json, 128, 128)) REQUIRE(n == 1);
}

TEST_CASE("sim sites: relays against the same workers connected flat, over the same WAN") {
  const CostMap map = uniform_map(128, 128, 8, 0.02);
  const SimResult sites = run(two_sites(50, 2), options(128, 128, 16), map);
  const SimResult flat = run(two_groups_flat(50, 2), options(128, 128, 16), map);
  REQUIRE(sites.completed);
  REQUIRE(flat.completed);
  CHECK(sites.makespan / flat.makespan > 0.5);
  CHECK(sites.makespan / flat.makespan < 1.5);
  // The master hears from two relays instead of six workers.
  CHECK(sites.messages_in < flat.messages_in);
}
