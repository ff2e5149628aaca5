// The allowance for files on their way (protocol/fetch_patience.h): the largest still missing, at
// 1 Mbit/s, at most 10 minutes; nothing once everything is there.
#include <doctest/doctest.h>

#include "protocol/fetch_patience.h"

TEST_SUITE_BEGIN("unit");

using namespace farm::proto;

TEST_CASE("fetch patience: the largest missing file at the slowest link the farm allows for") {
  const std::vector<AssetRef> assets = {{"a", "scene.toml", 1000}, {"b", "tex.png", 6'000'000}, {"c", "m.ply", 250'000},
                                        {"d", "huge.exr", 500'000'000}};
  CHECK(fetch_patience(assets, {}) == 0.0);
  CHECK(fetch_patience(assets, {"b"}) == doctest::Approx(48.0));  // 6 MB at 125 kB/s
  CHECK(fetch_patience(assets, {"b", "c"}) == doctest::Approx(48.0));  // each arrival is news from the master
  CHECK(fetch_patience(assets, {"c"}) == doctest::Approx(2.0));
  CHECK(fetch_patience(assets, {"d"}) == doctest::Approx(600.0));  // capped: a dead master is noticed in time
  CHECK(fetch_patience(assets, {"zzz"}) == 0.0);  // a hash the job does not name counts nothing
}

TEST_SUITE_END();
