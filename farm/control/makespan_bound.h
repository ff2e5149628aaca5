// Lower bounds on a job's makespan, so that "x1.3 of the bound" means something (issue 15).
//
// plain:  W / sum_i s_i, the work spread over every worker's speed from time zero. It ignores
//         that workers join late, start slowly and sit behind a network, so at scale it flatters
//         nobody: a job of 3 s ideal length with joins up to 30 s cannot meet it.
// fluid:  the T with sum_i s_i * max(0, min(T - d_i, e_i) - a_i) = W, where a_i is when worker i
//         could first render (join + start-up + the request's and the assignment's trips), d_i
//         the trip of its last result to the master and e_i when it fails or leaves. Work is
//         taken as a fluid: any worker may render any fraction of it, with no block overhead.
// honest: max(fluid, the costliest indivisible block (a min_block x min_block square) rendered
//         by one thread of the best worker for it, from its a_i, plus d_i).
// Every term is something no schedule can avoid, so honest <= any real makespan.
#pragma once

#include <limits>
#include <vector>

namespace farm {

struct BoundWorker {
  double start = 0;         // a_i: earliest time it could render its first block (master clock)
  double speed = 1;         // s_i: work units per second over all its threads
  double thread_speed = 1;  // work units per second of one thread (one block renders on one)
  double result_delay = 0;  // d_i: its result's trip to the master
  double end = std::numeric_limits<double>::infinity();  // e_i: fails or leaves (inf: never)
};

struct MakespanBound {
  double plain = 0;        // W / total speed (with the indivisible block, from time zero)
  double fluid = 0;        // the T of the fluid equation (infinite if the workers cannot do W)
  double indivisible = 0;  // earliest end of the costliest indivisible block
  double honest() const { return fluid > indivisible ? fluid : indivisible; }
};

// `work`: W in work units; `costliest_block`: the costliest min-block's work.
MakespanBound makespan_bound(const std::vector<BoundWorker>& workers, double work, double costliest_block);

}  // namespace farm
