// How renderer failures count (docs/failures.md, "renderer fails"), one logic for the master (its
// workers, through JobController) and the relay (its site workers): a block whose renders failed
// k_max_block_failures times ends the job instead of being retried forever, and a participant
// whose renderer failed k_max_failures_in_row blocks in a row sits the rest of the job out (a
// broken node fails a block in milliseconds and would use up the blocks' tries). Pure bookkeeping.
#pragma once

#include <map>
#include <set>
#include <tuple>

#include "base/limits.h"
#include "scheduler/block.h"
#include "scheduler/ids.h"

namespace farm {

// A block whose renders failed this many times (on any workers) ends the job: a renderer that
// crashes on one region every time would otherwise be given it forever.
inline constexpr int k_max_block_failures = 5;

struct FailureCount {
  int block_failures = 0;      // of this block, on any participant
  bool block_gives_up = false;  // this failure was the block's k_max_block_failures-th
  int in_row = 0;               // of this participant, since its last result
  bool bench = false;           // this failure benches the participant (once)
};

class RendererFailures {
 public:
  // `who`'s renderer failed `block`. A relay's failures are its site workers' (the relay benches
  // the broken one): `may_bench` false counts the block but never benches `who`.
  FailureCount failed(WorkerId who, const Block& block, bool may_bench = true);
  // A usable result from `who`: its renderer works.
  void succeeded(WorkerId who) { m_in_row.erase(who); }
  bool benched(WorkerId who) const { return m_benched.count(who) > 0; }
  // Gone: its count goes with it.
  void forget(WorkerId who);
  // A new job: nobody benched, no counts (benching lasts one job).
  void clear();

 private:
  std::map<std::tuple<int, int, int, int, int>, int> m_blocks;  // frame, x, y, width, height
  std::map<WorkerId, int> m_in_row;
  std::set<WorkerId> m_benched;
};

}  // namespace farm
