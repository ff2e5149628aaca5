#include "scheduler/scheduler.h"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include "base/limits.h"
#include "base/status.h"

namespace farm {

namespace {
constexpr Seconds k_never = std::numeric_limits<Seconds>::infinity();
}

Scheduler::Scheduler(SchedulerConfig config) : m_config(std::move(config)), m_policy(make_policy(m_config.policy)) {
  m_config.block_size = initial_block_size(m_config);
  if (m_config.width <= 0 || m_config.height <= 0 || m_config.frames.empty()) {
    throw std::invalid_argument("scheduler: empty image");
  }
  if (m_config.block_size < 1 || m_config.min_block < 1 || m_config.max_copies < 1) {
    throw std::invalid_argument("scheduler: block size, min block and max copies must be >= 1");
  }
  // A waiting time or heartbeat of zero would put a deadline at every instant: the driver's
  // clock would never move past it.
  if (!(m_config.base_wait > 0) || !(m_config.heartbeat_interval > 0) || m_config.liveness < 1) {
    throw std::invalid_argument("scheduler: waiting time, heartbeat interval and liveness must be positive");
  }
  if (m_config.block_size > k_max_block_side || m_config.grid < 1 || m_config.grid > k_max_block_side) {
    throw std::invalid_argument("scheduler: block size and grid must be 1 to " + std::to_string(k_max_block_side));
  }
  auto on_grid = [g = m_config.grid](int side) { return (side + g - 1) / g * g; };
  m_config.block_size = on_grid(m_config.block_size);
  m_config.min_block = on_grid(std::min(m_config.min_block, m_config.block_size));
  for (int frame : m_config.frames) {
    std::vector<Block> tiles = tile_frame(frame, m_config.width, m_config.height, m_config.block_size);
    for (const Block& b : tiles) {
      m_total_pixels += b.pixels();
      m_pending_work += work_of(b);
    }
    if (m_policy->costliest_first()) order_costliest_first(tiles);
    m_pool.insert(m_pool.end(), tiles.begin(), tiles.end());
  }
  m_pending_pixels = m_total_pixels;
}

void Scheduler::order_costliest_first(std::vector<Block>& blocks) const {
  std::vector<std::pair<double, size_t>> keys(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) keys[i] = {-work_of(blocks[i]), i};  // ties keep their order
  std::sort(keys.begin(), keys.end());
  std::vector<Block> sorted;
  sorted.reserve(blocks.size());
  for (const auto& k : keys) sorted.push_back(blocks[k.second]);
  blocks = std::move(sorted);
}

void Scheduler::do_restore(const std::vector<Block>& completed, AttemptId next_attempt) {
  // Resuming happens before any worker joins; anything else is a bug in the driver.
  FARM_CHECK(m_workers.empty() && m_outstanding.empty() && m_completed_blocks == 0);
  const int s = m_config.block_size;
  const int columns = (m_config.width + s - 1) / s, rows = (m_config.height + s - 1) / s;
  std::map<int, size_t> frame_index;
  for (size_t i = 0; i < m_config.frames.size(); ++i) frame_index[m_config.frames[i]] = i;
  // The pool still is the initial tiling (in the policy's order): bucket each completed block
  // under the tiles it meets, found by position.
  std::vector<size_t> slot(m_config.frames.size() * columns * rows, 0);
  for (size_t t = 0; t < m_pool.size(); ++t) {
    const Block& tile = m_pool[t];
    slot[frame_index.at(tile.frame) * columns * rows + static_cast<size_t>(tile.y / s) * columns + tile.x / s] = t;
  }
  std::vector<std::vector<Block>> cuts(m_pool.size());
  for (const Block& b : completed) {
    auto f = frame_index.find(b.frame);
    if (f == frame_index.end() || b.width < 1 || b.height < 1 || b.x < 0 || b.y < 0 ||
        b.x + b.width > m_config.width || b.y + b.height > m_config.height) {
      throw std::invalid_argument("restored block lies outside the job's frames");
    }
    for (int ty = b.y / s; ty <= (b.y + b.height - 1) / s; ++ty)
      for (int tx = b.x / s; tx <= (b.x + b.width - 1) / s; ++tx)
        cuts[slot[f->second * columns * rows + static_cast<size_t>(ty) * columns + tx]].push_back(b);
  }
  std::deque<Block> pool;
  for (size_t t = 0; t < m_pool.size(); ++t) {
    std::vector<Block> pieces{m_pool[t]};
    for (const Block& cut : cuts[t]) {
      const Block& tile = m_pool[t];
      const int64_t inside = int64_t{std::min(tile.x + tile.width, cut.x + cut.width) - std::max(tile.x, cut.x)} *
                             (std::min(tile.y + tile.height, cut.y + cut.height) - std::max(tile.y, cut.y));
      std::vector<Block> rest;
      int64_t removed = 0;
      for (const Block& p : pieces) {
        std::vector<Block> left = subtract_block(p, cut);
        removed += p.pixels();
        for (const Block& l : left) removed -= l.pixels();
        rest.insert(rest.end(), left.begin(), left.end());
      }
      // Less than the overlap with the tile: part of `cut` was already completed by another.
      if (removed != inside) throw std::invalid_argument("restored blocks overlap");
      pieces = std::move(rest);
    }
    pool.insert(pool.end(), pieces.begin(), pieces.end());
  }
  m_pool = std::move(pool);
  for (const Block& b : completed) {
    m_completed_pixels += b.pixels();
    m_pending_pixels -= b.pixels();
    m_pending_work -= work_of(b);
  }
  m_pending_work = std::max(0.0, m_pending_work);
  m_restored_blocks = completed.size();
  m_next_attempt = std::max(m_next_attempt, next_attempt);
}

void Scheduler::do_worker_joined(WorkerId id, Seconds now, int threads, int members) {
  Worker& w = m_workers[id];
  const bool again = w.id == id;  // a repeated hello replaces the old counts
  m_total_threads -= again ? w.threads : 0;
  if (again) forget_speed(w);
  m_deadlines.erase({w.indexed_deadline, id});
  if (m_first_join < 0) m_first_join = now;
  const int old_threads = w.threads;
  w.id = id;
  w.threads = std::max(1, threads);
  w.members = std::clamp(members, 0, w.threads);
  m_total_threads += w.threads;
  // A relay whose site grew or shrank keeps its per-thread speed and the size the policy gave it.
  const bool resized_relay = again && w.members > 0;
  if (resized_relay) rescale_speed(w, old_threads);
  count_speed(w);
  if (!resized_relay) w.block_size = m_config.block_size;
  w.last_seen = now;
  w.progress_since = now;
  w.indexed_deadline = deadline_of(w);
  m_deadlines.insert({w.indexed_deadline, id});
}

void Scheduler::do_worker_left(WorkerId id) { remove_worker(id); }

void Scheduler::do_heard_from(WorkerId id, Seconds now) {
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return;
  it->second.last_seen = std::max(it->second.last_seen, now);
  reindex(it->second);
}

void Scheduler::do_network_sample(WorkerId id, Seconds rtt, double bytes_per_second, Seconds lease_overhead) {
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return;
  if (rtt >= 0) it->second.rtt = rtt;
  if (bytes_per_second > 0) it->second.bytes_per_second = bytes_per_second;
  if (lease_overhead >= 0) it->second.lease_overhead = lease_overhead;
  reindex(it->second);
}

// wait_w = base_wait + 2 * rtt_w + bytes of one block of the worker's size / bandwidth_w:
// a slow link must not be mistaken for a slow CPU (the paper raised 4 s to 5 s by hand).
Seconds Scheduler::wait_for(const Worker& w) const {
  Seconds wait = m_config.base_wait + 2 * w.rtt;
  if (w.bytes_per_second > 0) {
    double bytes = static_cast<double>(w.block_size) * w.block_size * m_config.result_bytes_per_pixel;
    wait += bytes / w.bytes_per_second;
  }
  return wait;
}

Seconds Scheduler::deadline_of(const Worker& w) const {
  Seconds next = w.last_seen + m_config.heartbeat_interval * m_config.liveness;
  if (!w.leases.empty()) next = std::min(next, w.progress_since + wait_for(w) * (w.timeouts_since_progress + 1));
  return next;
}

void Scheduler::reindex(Worker& w) {
  Seconds d = deadline_of(w);
  if (d == w.indexed_deadline) return;
  m_deadlines.erase({w.indexed_deadline, w.id});
  w.indexed_deadline = d;
  m_deadlines.insert({d, w.id});
}

WorkerView Scheduler::view_of(const Worker& w) const {
  return {w.id,         w.block_size,          w.threads, wait_for(w), w.fast_results_in_row, w.work_per_second,
          w.rtt,        w.held_work,           w.lease_overhead, w.members, static_cast<int>(w.leases.size())};
}

PoolView Scheduler::pool_view(Seconds now) const {
  return {m_pending_pixels,
          std::max(1, total_threads()),
          std::max<size_t>(1, m_workers.size()),
          std::max(0.0, m_pending_work),
          std::max(0.0, m_outstanding_work),
          std::max(0.0, m_known_speed),
          m_known_threads,
          m_thread_speeds.empty() ? 0.0 : *m_thread_speeds.begin(),
          m_first_join >= 0 ? std::max(0.0, now - m_first_join) : 0.0,
          m_config.min_block};
}

bool Scheduler::apply(Worker& w, const std::optional<SizeChange>& change, Seconds now) {
  if (!change || change->to_size == w.block_size) return false;
  m_decisions.push_back({now, w.id, w.block_size, change->to_size, change->reason});
  w.block_size = change->to_size;
  return true;
}

Assignment Scheduler::lease(Worker& w, BlockId id, const Block& block, Seconds now, bool is_copy) {
  AttemptId attempt = m_next_attempt++;
  m_leases[attempt] = {w.id, id, now, w.held_work};
  m_given[attempt] = {w.id, block};
  m_outstanding[id].attempts.push_back(attempt);
  index_copy_candidate(id);
  if (w.leases.empty()) {
    // An idle worker's clock starts now, not at its last result.
    w.progress_since = now;
    w.timeouts_since_progress = 0;
  }
  w.leases.push_back(attempt);
  w.held_work += m_outstanding.at(id).work;
  return {w.id, attempt, id, block, is_copy};
}

std::optional<Assignment> Scheduler::assign_from_pool(Worker& w, Seconds now) {
  if (m_pool.empty()) return std::nullopt;
  const WorkerView view = view_of(w);
  const PoolView pool = pool_view(now);
  int size = m_policy->assignment_size(view, pool, m_config.min_block);
  if (size <= 0 && !w.leases.empty()) return std::nullopt;  // the policy holds off; it will ask again
  size = std::max(1, size);
  const double max_work = m_policy->assignment_work(view, pool);
  Block block = m_pool.front();
  m_pool.pop_front();
  double work = work_of(block);
  // Carve quadtree-style until the block fits (in size, and in work down to min_block); the
  // siblings go back to the front, in order, so the image stays covered exactly once and
  // neighbouring pieces are handed out next.
  while (block.size() > size || (work > max_work && block.size() > m_config.min_block)) {
    std::vector<Block> pieces =
        split_block(block, block.size() > size ? size : std::max(m_config.min_block, block.size() - 1), m_config.grid);
    if (pieces.size() == 1) break;  // as small as the grid allows
    if (m_policy->costliest_first()) order_costliest_first(pieces);
    for (auto it = pieces.rbegin(); it + 1 != pieces.rend(); ++it) m_pool.push_front(*it);
    block = pieces.front();
    work = work_of(block);
  }
  m_pending_pixels -= block.pixels();
  m_pending_work -= work;
  m_outstanding_work += work;
  BlockId id = m_next_block_id++;
  m_outstanding[id].block = block;
  m_outstanding[id].work = work;
  return lease(w, id, block, now, false);
}

int max_leases_per_worker(int threads, int members) {
  threads = std::max(1, threads);
  return 2 * threads + 8 * std::clamp(members, 1, threads);
}

std::vector<Assignment> Scheduler::do_request(WorkerId id, Seconds now, int credits) {
  std::vector<Assignment> out;
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return out;
  Worker& w = it->second;
  w.last_seen = std::max(w.last_seen, now);
  // A peer cannot pin the pool by asking for more than it could possibly render soon.
  const int cap = std::min(max_leases_per_worker(w.threads, w.members), m_policy->max_in_flight(view_of(w), pool_view(now)));
  credits = std::min(credits, cap - static_cast<int>(w.leases.size()));
  for (int i = 0; i < credits; ++i) {
    std::optional<Assignment> a = m_pool.empty() ? std::nullopt : assign_early_copy(w, now);
    if (!a) a = assign_from_pool(w, now);
    if (!a && !m_pool.empty()) break;  // held off by the policy
    if (!a && m_policy->copies_need_free_thread() && static_cast<int>(w.leases.size()) >= w.threads) break;
    if (!a) a = assign_copy(w, now);
    if (!a) break;
    out.push_back(*a);
  }
  reindex(w);
  return out;
}

void Scheduler::drop_lease(AttemptId attempt) {
  auto it = m_leases.find(attempt);
  if (it == m_leases.end()) return;
  auto wit = m_workers.find(it->second.worker);
  auto oit = m_outstanding.find(it->second.block_id);
  if (wit != m_workers.end()) {
    auto& leases = wit->second.leases;
    leases.erase(std::remove(leases.begin(), leases.end(), attempt), leases.end());
    if (oit != m_outstanding.end()) wit->second.held_work -= oit->second.work;
  }
  if (oit != m_outstanding.end()) {
    auto& attempts = oit->second.attempts;
    attempts.erase(std::remove(attempts.begin(), attempts.end(), attempt), attempts.end());
    index_copy_candidate(oit->first);
  }
  m_leases.erase(it);
}

ResultReply Scheduler::do_result(WorkerId id, AttemptId attempt, Seconds now, Seconds render_seconds) {
  ResultReply reply;
  do_heard_from(id, now);  // not the public call: the trace records this result once, as one call
  auto lit = m_leases.find(attempt);
  if (lit == m_leases.end() || lit->second.worker != id) {
    ++m_late_results;  // cancelled, settled by another copy, or from a worker declared dead
    return reply;
  }
  const Lease lease_copy = lit->second;
  Outstanding done_block = m_outstanding.at(lease_copy.block_id);
  reply.outcome = ResultOutcome::accepted;
  reply.block_id = lease_copy.block_id;
  reply.block = done_block.block;
  for (AttemptId other : done_block.attempts) {
    if (other != attempt) reply.cancels.push_back({m_leases.at(other).worker, other});
  }
  for (AttemptId a : done_block.attempts) drop_lease(a);
  m_outstanding.erase(lease_copy.block_id);
  m_outstanding_work -= done_block.work;
  ++m_completed_blocks;
  m_completed_pixels += done_block.block.pixels();
  FARM_CHECK(m_completed_pixels <= m_total_pixels);  // a pixel committed twice would break exactness

  Worker& w = m_workers.at(id);
  Seconds took = now - std::max(lease_copy.assigned_at, w.progress_since);
  bool fast = took <= 0.5 * wait_for(w);
  w.fast_results_in_row = fast ? w.fast_results_in_row + 1 : 0;
  if (measure_speed(w, done_block.work, took, render_seconds))
    for (AttemptId a : w.leases) index_copy_candidate(m_leases.at(a).block_id);  // their expected finish moved
  w.progress_since = now;
  w.timeouts_since_progress = 0;
  if (apply(w, m_policy->on_result(view_of(w), m_config.block_size), now)) {
    w.fast_results_in_row = 0;  // a change consumes the streak
  }
  reindex(w);
  return reply;
}

void Scheduler::do_release(WorkerId worker, AttemptId attempt) {
  auto lit = m_leases.find(attempt);
  if (lit == m_leases.end() || lit->second.worker != worker) return;
  BlockId block_id = lit->second.block_id;
  drop_lease(attempt);
  auto oit = m_outstanding.find(block_id);
  if (oit != m_outstanding.end() && oit->second.attempts.empty()) {
    m_pool.push_front(oit->second.block);
    m_pending_pixels += oit->second.block.pixels();
    m_pending_work += oit->second.work;
    m_outstanding_work -= oit->second.work;
    m_outstanding.erase(oit);
  }
  auto wit = m_workers.find(worker);
  if (wit != m_workers.end()) reindex(wit->second);
}

void Scheduler::remove_worker(WorkerId id) {
  auto it = m_workers.find(id);
  if (it == m_workers.end()) return;
  std::vector<AttemptId> leases = it->second.leases;
  // Back to the front of the pool at once, in their original order.
  std::vector<Block> requeue;
  for (AttemptId a : leases) {
    BlockId block_id = m_leases.at(a).block_id;
    drop_lease(a);
    auto oit = m_outstanding.find(block_id);
    if (oit != m_outstanding.end() && oit->second.attempts.empty()) {
      requeue.push_back(oit->second.block);
      m_pending_pixels += oit->second.block.pixels();
      m_pending_work += oit->second.work;
      m_outstanding_work -= oit->second.work;
      m_outstanding.erase(oit);
    }
  }
  for (auto rit = requeue.rbegin(); rit != requeue.rend(); ++rit) m_pool.push_front(*rit);
  m_deadlines.erase({it->second.indexed_deadline, id});
  m_total_threads -= it->second.threads;
  forget_speed(it->second);
  m_workers.erase(it);
}

std::vector<WorkerId> Scheduler::do_tick(Seconds now) {
  // Only workers whose deadline has come can change; in worker order, as a full scan would.
  std::vector<WorkerId> due;
  for (auto it = m_deadlines.begin(); it != m_deadlines.end() && it->first <= now; ++it) due.push_back(it->second);
  std::sort(due.begin(), due.end());
  std::vector<WorkerId> dead;
  const Seconds silence_limit = m_config.heartbeat_interval * m_config.liveness;
  for (WorkerId id : due) {
    // The same expression as deadline_of(): `now - last_seen >= limit` can be false while
    // `last_seen + limit <= now` is true (rounding), and the deadline would never pass.
    if (m_workers.at(id).last_seen + silence_limit <= now) dead.push_back(id);
  }
  for (WorkerId id : dead) remove_worker(id);
  for (WorkerId id : due) {
    auto wit = m_workers.find(id);
    if (wit == m_workers.end()) continue;
    Worker& w = wit->second;
    if (w.leases.empty()) {
      reindex(w);
      continue;
    }
    // Once per elapsed waiting period since the worker last made progress.
    while (now >= w.progress_since + wait_for(w) * (w.timeouts_since_progress + 1)) {
      ++w.timeouts_since_progress;
      w.fast_results_in_row = 0;
      apply(w, m_policy->on_timeout(view_of(w), m_config.min_block), now);
      if (!(wait_for(w) > 0)) break;  // a zero waiting time would never leave this loop
    }
    reindex(w);
  }
  return dead;
}

Seconds Scheduler::next_deadline() const { return m_deadlines.empty() ? k_never : m_deadlines.begin()->first; }

// The public mutating calls: the work, then the observer (the trace) sees the call and its
// outputs. Every driver goes through these, so nothing can skip the trace.
void Scheduler::restore(const std::vector<Block>& completed, AttemptId next_attempt) {
  do_restore(completed, next_attempt);
  if (m_observer) m_observer->restored(completed, next_attempt);
}

void Scheduler::worker_joined(WorkerId worker, Seconds now, int threads, int members) {
  do_worker_joined(worker, now, threads, members);
  if (m_observer) m_observer->joined(worker, now, threads, members);
}

void Scheduler::worker_left(WorkerId worker, Seconds now) {
  do_worker_left(worker);
  if (m_observer) m_observer->left(worker, now);
}

void Scheduler::heard_from(WorkerId worker, Seconds now) {
  do_heard_from(worker, now);
  if (m_observer) m_observer->heard(worker, now);
}

void Scheduler::network_sample(WorkerId worker, Seconds rtt, double bytes_per_second, Seconds lease_overhead) {
  do_network_sample(worker, rtt, bytes_per_second, lease_overhead);
  if (m_observer) m_observer->network(worker, rtt, bytes_per_second, lease_overhead);
}

std::vector<Assignment> Scheduler::request(WorkerId worker, Seconds now, int credits) {
  std::vector<Assignment> out = do_request(worker, now, credits);
  if (m_observer) m_observer->requested(worker, now, credits, out);
  return out;
}

void Scheduler::release(WorkerId worker, AttemptId attempt) {
  do_release(worker, attempt);
  if (m_observer) m_observer->released(worker, attempt);
}

ResultReply Scheduler::result(WorkerId worker, AttemptId attempt, Seconds now, Seconds render_seconds) {
  ResultReply reply = do_result(worker, attempt, now, render_seconds);
  if (m_observer) m_observer->resulted(worker, attempt, now, render_seconds, reply);
  return reply;
}

std::vector<WorkerId> Scheduler::tick(Seconds now) {
  std::vector<WorkerId> dead = do_tick(now);
  if (m_observer) m_observer->ticked(now, dead);
  return dead;
}

}  // namespace farm
