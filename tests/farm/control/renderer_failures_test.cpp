// How renderer failures count (control/renderer_failures.h), the master's and the relay's rule.
#include <doctest/doctest.h>

#include "control/renderer_failures.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

TEST_CASE("renderer failures: k_max_failures_in_row in a row bench a participant once, and a result resets the count") {
  RendererFailures f;
  const Block a{1, 0, 0, 8, 8}, b{1, 8, 0, 8, 8};
  for (int i = 1; i < k_max_failures_in_row; ++i) CHECK_FALSE(f.failed(7, i % 2 ? a : b).bench);
  f.succeeded(7);
  for (int i = 1; i < k_max_failures_in_row; ++i) CHECK_FALSE(f.failed(7, a).bench);
  const FailureCount third = f.failed(7, b);
  CHECK(third.bench);
  CHECK(third.in_row == k_max_failures_in_row);
  CHECK(f.benched(7));
  CHECK_FALSE(f.failed(7, b).bench);  // once
  CHECK_FALSE(f.benched(8));
  f.clear();  // the next job
  CHECK_FALSE(f.benched(7));
}

TEST_CASE("renderer failures: a block gives up at its k_max_block_failures-th failure on any participants, and a relay is never benched") {
  RendererFailures f;
  const Block a{2, 16, 8, 8, 4};
  int gave_up = 0;
  for (int i = 1; i <= k_max_block_failures + 2; ++i) {
    const FailureCount c = f.failed(100, a, /*may_bench=*/false);  // a relay: its site workers' failures
    CHECK(c.block_failures == i);
    CHECK_FALSE(c.bench);
    gave_up += c.block_gives_up ? 1 : 0;
    if (c.block_gives_up) CHECK(i == k_max_block_failures);
  }
  CHECK(gave_up == 1);
  CHECK_FALSE(f.benched(100));
  // Another participant's failure of the same block counts toward the block too.
  CHECK(f.failed(5, a).block_failures == k_max_block_failures + 3);
  f.forget(5);
  CHECK(f.failed(5, Block{2, 0, 0, 8, 8}).in_row == 1);
}

TEST_SUITE_END();
