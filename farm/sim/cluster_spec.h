// A simulated cluster (`farm sim --cluster FILE.toml`, `farm plan`): groups of workers with a
// speed, threads, arrival/departure/failure times and a network link each. Ranges ([lo, hi])
// are drawn per worker, uniformly, from the simulation's seed, so 10,000 heterogeneous
// workers take five lines. Example:
//
//   [network]                  # defaults for every group
//   latency_ms = 0.1           # one way
//   bandwidth_mbit = 1000      # per direction; 0 = unlimited
//
//   [[group]]
//   name = "lab"
//   count = 4
//   speed = 1.0                # relative to one thread of the machine that made the cost map
//   threads = 1
//
//   [[group]]
//   name = "wan"
//   count = 1000
//   speed = [0.1, 1.0]         # uniform in the range, per worker
//   latency_ms = [0, 100]
//   fail = [5, 50]             # crashes silently at a time drawn in the range
//   render_failures = 0.1      # the fraction of its blocks whose renderer fails (BlockFailed)
//   block_overhead_ms = 0.3    # per block besides rendering (default: per_block_overhead_ms / speed)
//
//   [[group]]
//   name = "capped"            # a CPU quota (CFS bandwidth control), as tools/sweep emulates slow nodes
//   speed = 1.0                # then: the speed of a thread while it is not throttled
//   cpu_quota = 0.25           # cores' worth of CPU per period for the whole worker
//   quota_period_ms = 10       # the period (the kernel's default is 100)
//
//   [[site]]                   # a relay (docs/relays.md): one participant for its workers
//   name = "campus"
//   latency_ms = 50            # one way, between the relay and the master (the WAN)
//   bandwidth_mbit = 100       # the site's uplink, per direction; 0 = unlimited
//   spare = 4                  # the relay's --spare
//
//   [[group]]
//   site = "campus"            # behind that relay: latency_ms/bandwidth_mbit are the LAN link to it
//   count = 10
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace farm {

// A number or a uniform range, as written in the file.
struct SimRange {
  double lo = 0, hi = 0;
  bool is_range() const { return hi > lo; }
};

struct WorkerGroupSpec {
  std::string name;
  int count = 1;
  SimRange speed{1, 1};
  int threads = 1;
  int prefetch = 1;
  SimRange join{0, 0};        // seconds after the master starts
  SimRange startup{0.5, 0.5};  // join -> first request: process start, scene transfer and load
  SimRange leave{-1, -1};     // leaves cleanly (-1 never)
  SimRange fail{-1, -1};      // goes silent (crash or partition; -1 never)
  // The fraction of its blocks whose renderer fails (a crash, a limit): each is reported as
  // the real worker reports it (BlockFailed), and the shared controller counts them as the real
  // master does (control/renderer_failures.h: a block failing 5 times ends the job, a worker
  // failing 3 blocks in a row sits the job out). 1 is a broken renderer. Workers of a group
  // behind a site are not modelled with failures yet (refused).
  double render_failures = 0;
  SimRange latency_ms{0.1, 0.1};
  SimRange jitter_ms{0, 0};
  SimRange bandwidth_mbit{1000, 1000};
  // Wall seconds per block besides rendering on these workers, in ms; -1: the cluster's
  // per_block_overhead_ms / speed. For workers whose overhead was measured (a CPU quota throttles
  // the farm's own work more than in proportion, results/sim/validation.md).
  SimRange block_overhead_ms{-1, -1};
  // A CPU quota (cores, 0 = none): the worker's threads may run cpu_quota x period CPU seconds in
  // each period and wait for the next one once they have (block_overhead is CPU work too).
  SimRange cpu_quota{0, 0};
  double quota_period_ms = 100;
  std::string site;  // the [[site]] whose relay serves these workers; empty: the master directly
};

// A site: its workers reach the master through one relay over the site's WAN link.
struct SiteSpec {
  std::string name;
  SimRange latency_ms{0.1, 0.1};     // one way, relay <-> master
  SimRange bandwidth_mbit{1000, 1000};
  int spare = 4;                     // unstarted leases the relay asks for beyond its workers' room
};

struct ClusterSpec {
  std::string file;
  // Per-block cost of the farm itself on a worker (receive, encode, compress, send), seconds
  // at speed 1 (a worker of speed s takes this / s); measured on loopback in results/bench_farm.md.
  double per_block_overhead = 150e-6;
  std::vector<WorkerGroupSpec> groups;
  std::vector<SiteSpec> sites;
  int total_workers() const;
};

// One worker of a cluster after ranges are drawn.
struct SimWorkerSpec {
  std::string name;
  double speed = 1;
  int threads = 1;
  int prefetch = 1;
  double join = 0, startup = 0.5, leave = -1, fail = -1;
  double render_failures = 0;  // WorkerGroupSpec::render_failures
  double latency = 1e-4;  // seconds, one way
  double jitter = 0;      // seconds, uniform extra per message
  double bandwidth = 0;   // bytes per second per direction, 0 = unlimited
  double block_overhead = -1;  // seconds per block besides rendering; < 0: the cluster's / speed
  double cpu_quota = 0;        // cores, 0 = none (WorkerGroupSpec::cpu_quota)
  double quota_period = 0.1;   // seconds
  int site = -1;               // index into the cluster's sites (its link is then the LAN to the relay); -1: none
};

// One site after ranges are drawn.
struct SimSiteSpec {
  std::string name;
  double latency = 1e-4;  // seconds, one way, relay <-> master
  double bandwidth = 0;   // bytes per second per direction, 0 = unlimited
  int spare = 4;
};

// Reads and checks a cluster file; errors are rt::SceneError at "file:line:column".
ClusterSpec read_cluster_spec(const std::string& path);
// The text of a simulator's input file (`what`: "cluster file", "jobs file"), read up to one byte
// past the scene files' limit (the parser refuses it then); throws rt::SceneError naming the file.
std::string read_sim_input(const std::string& path, const std::string& what);
ClusterSpec parse_cluster_spec(const std::string& text, const std::string& file);

// Every worker, ranges drawn with `seed` (same seed, same cluster).
std::vector<SimWorkerSpec> expand_cluster(const ClusterSpec& spec, uint64_t seed);
// Every site, ranges drawn from their own stream of `seed` (adding sites draws no other
// worker).
std::vector<SimSiteSpec> expand_sites(const ClusterSpec& spec, uint64_t seed);

}  // namespace farm
