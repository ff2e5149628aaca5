#include "control/renderer_failures.h"

namespace farm {

FailureCount RendererFailures::failed(WorkerId who, const Block& b, bool may_bench) {
  FailureCount c;
  c.block_failures = ++m_blocks[{b.frame, b.x, b.y, b.width, b.height}];
  c.block_gives_up = c.block_failures == k_max_block_failures;
  if (!may_bench) return c;
  c.in_row = ++m_in_row[who];
  if (c.in_row >= k_max_failures_in_row && !m_benched.count(who)) {
    m_benched.insert(who);
    c.bench = true;
  }
  return c;
}

void RendererFailures::forget(WorkerId who) {
  m_in_row.erase(who);
  m_benched.erase(who);
}

void RendererFailures::clear() {
  m_blocks.clear();
  m_in_row.clear();
  m_benched.clear();
}

}  // namespace farm
