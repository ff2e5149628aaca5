// What happened during a farm run, for --stats JSON, the tile map and the final summary:
// every lease with its timing and outcome, per-worker totals, the policy's decisions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace farm {

enum class LeaseOutcome : uint8_t {
  outstanding,  // no result yet
  accepted,     // its pixels are in the image
  late,         // a result came after another copy won (or after the lease was settled)
  cancelled,    // withdrawn: another copy won, or it could not be delivered or used
  lost,         // its worker died or left while it was outstanding
  recalled,     // a relay gave it back unstarted (moved to another site)
};
// The name in --stats JSON ("accepted", ...).
const char* lease_outcome_name(LeaseOutcome outcome);

struct LeaseRecord {
  Block block;
  WorkerId worker = 0;
  AttemptId attempt = 0;
  bool is_copy = false;
  double assigned = 0;        // master clock, seconds since the job started
  double received = -1;       // when its result arrived (-1: never)
  double render_seconds = 0;  // as reported by the worker
  double queued_seconds = 0;  // waited in the worker before rendering
  uint64_t bytes = 0;         // result payload on the wire
  uint64_t rays = 0;
  LeaseOutcome outcome = LeaseOutcome::outstanding;
};

struct WorkerRecord {
  WorkerId id = 0;
  std::string name;
  int threads = 1;
  int site_workers = 0;  // > 0: a relay, with this many workers behind it
  double joined = 0, left = -1;
  bool died = false;
  uint64_t blocks = 0, pixels = 0, rays = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  double busy_seconds = 0;  // sum of render time of its blocks, over its threads
};

class RunStats {
 public:
  void joined(WorkerId id, const std::string& name, int threads, double now, int site_workers = 0);
  void resized(WorkerId id, int threads, int site_workers);
  void left(WorkerId id, double now, bool died);
  void assigned(const Assignment& a, double now);
  void result(WorkerId worker, AttemptId attempt, double now, double render_seconds, double queued_seconds,
              uint64_t bytes, uint64_t rays, bool accepted);
  void cancelled(AttemptId attempt);
  void recalled(AttemptId attempt);
  void bytes_out(WorkerId id, uint64_t bytes);

  uint64_t accepted_rays() const { return m_rays; }
  const std::map<AttemptId, LeaseRecord>& leases() const { return m_leases; }
  const std::map<WorkerId, WorkerRecord>& workers() const { return m_workers; }

  // `summary` holds extra top-level fields already formatted as JSON ("\"key\": value").
  std::string json(const Scheduler& scheduler, double makespan, const std::vector<std::string>& summary) const;

 private:
  std::map<AttemptId, LeaseRecord> m_leases;
  std::map<WorkerId, WorkerRecord> m_workers;
  uint64_t m_rays = 0;
};

}  // namespace farm
