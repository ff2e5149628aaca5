// Cost maps: block costs from tiles, resampling, the file format (and its refusal of bad
// files), and `farm single --cost-map` / `farm render --cost-map` end to end.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "test_paths.h"
#include "farm/process.h"
#include "costs/cost_map.h"
#include "costs/cost_map_from_blocks.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using namespace farm;

namespace {

const std::string k_farm = FARM_EXE;

// 10 x 7 pixels in tiles of 4: 3 x 2 tiles, the last column 2 wide and the last row 3 high.
CostMap small_map(int frames = 1) {
  CostMap m(10, 7, 4, frames);
  for (int f = 1; f <= frames; ++f)
    for (int r = 0; r < m.rows(); ++r)
      for (int c = 0; c < m.columns(); ++c) m.at(f, c, r) = 0.001 * (1 + c + 3 * r) * f;
  return m;
}

std::string write_text(const fs::path& dir, const std::string& name, const std::string& text) {
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The message read() throws for `text`, or "" if it reads fine.
std::string read_error(const fs::path& dir, const std::string& text) {
  const std::string path = write_text(dir, "bad.txt", text);
  try {
    CostMap::read(path);
  } catch (const std::invalid_argument& e) {  // the user's file: bad input (docs/architecture.md, Errors)
    return e.what();
  }
  return {};
}

std::string header(const std::string& sizes = "width 10 height 7 tile 4 frames 1") {
  return "farm-cost-map 1\n" + sizes + "\nnote test\n";
}

std::string file_text(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("cost map: geometry, edge tiles and totals" * doctest::test_suite("unit")) {
  CostMap m = small_map(2);
  CHECK(m.columns() == 3);
  CHECK(m.rows() == 2);
  CHECK(m.tile_pixels(0, 0) == 16);
  CHECK(m.tile_pixels(2, 0) == 8);
  CHECK(m.tile_pixels(2, 1) == 6);
  CHECK(m.frame_total(1) == doctest::Approx(0.021));
  CHECK(m.frame_total(2) == doctest::Approx(0.042));
  CHECK(m.total() == doctest::Approx(0.063));
  CHECK_THROWS_AS(m.at(3, 0, 0), std::out_of_range);
  CHECK_THROWS_AS(m.at(1, 3, 0), std::out_of_range);
  CHECK_THROWS_AS(CostMap(0, 7, 4), std::invalid_argument);
  CHECK_THROWS_AS(CostMap(65536, 65536, 1), std::invalid_argument);  // 2^32 cells
}

TEST_CASE("cost map: a block's cost is the sum of the tiles it covers, partial tiles in proportion" * doctest::test_suite("unit")) {
  CostMap m = small_map(2);
  // Whole tiles, including the clipped edge ones.
  CHECK(m.cost({1, 0, 0, 10, 7}) == doctest::Approx(m.frame_total(1)));
  CHECK(m.cost({2, 0, 0, 10, 7}) == doctest::Approx(m.frame_total(2)));
  CHECK(m.cost({1, 4, 0, 6, 4}) == doctest::Approx(m.at(1, 1, 0) + m.at(1, 2, 0)));
  CHECK(m.cost({1, 0, 4, 4, 3}) == doctest::Approx(m.at(1, 0, 1)));
  // Partial: a 2x2 corner of a full tile is a quarter of it; one column of the 2-wide edge
  // tile is half of it; one pixel of the 2x3 corner tile is a sixth.
  CHECK(m.cost({1, 0, 0, 2, 2}) == doctest::Approx(m.at(1, 0, 0) / 4));
  CHECK(m.cost({1, 9, 0, 1, 4}) == doctest::Approx(m.at(1, 2, 0) / 2));
  CHECK(m.cost({1, 9, 6, 1, 1}) == doctest::Approx(m.at(1, 2, 1) / 6));
  // The 2x2 pixels around (4, 4) straddle four tiles: one pixel of each (the lower ones are 3 high).
  CHECK(m.cost({1, 3, 3, 2, 2}) ==
        doctest::Approx((m.at(1, 0, 0) + m.at(1, 1, 0)) / 16 + (m.at(1, 0, 1) + m.at(1, 1, 1)) / 12));
  // Any tiling of the frame adds up to its total.
  for (int s : {1, 2, 3, 5, 16}) {
    double sum = 0;
    for (const Block& b : tile_frame(1, 10, 7, s)) sum += m.cost(b);
    CHECK(sum == doctest::Approx(m.frame_total(1)));
  }
  CHECK(m.cost({1, 20, 20, 4, 4}) == 0.0);
}

TEST_CASE("cost map: scaled() conserves totals times the pixel ratio and work factor" * doctest::test_suite("unit")) {
  CostMap m = small_map(2);
  struct Size {
    int w, h, tile;
  };
  for (const Size& z : {Size{20, 14, 4}, Size{5, 3, 2}, Size{37, 11, 8}, Size{1, 1, 1}}) {
    CAPTURE(z.w);
    CostMap s = m.scaled(z.w, z.h, 2.5, z.tile);
    CHECK(s.width() == z.w);
    CHECK(s.height() == z.h);
    CHECK(s.tile() == z.tile);
    CHECK(s.frames() == 2);
    const double ratio = (static_cast<double>(z.w) * z.h) / (10.0 * 7.0) * 2.5;
    CHECK(s.frame_total(1) == doctest::Approx(m.frame_total(1) * ratio));
    CHECK(s.frame_total(2) == doctest::Approx(m.frame_total(2) * ratio));
  }
  // The same size and tile give the same map back; a costly region stays where it was.
  CostMap same = m.scaled(10, 7, 1.0, 4);
  for (int r = 0; r < m.rows(); ++r)
    for (int c = 0; c < m.columns(); ++c) CHECK(same.at(1, c, r) == doctest::Approx(m.at(1, c, r)));
  CostMap hot(64, 64, 8);
  hot.at(1, 7, 7) = 1.0;  // bottom-right corner
  CostMap big = hot.scaled(128, 128, 1.0, 8);
  CHECK(big.cost({1, 96, 96, 32, 32}) > 0.9);
  // Shrunk so far that no sample lands on the costly tile: spread evenly, total kept.
  CostMap tiny = hot.scaled(2, 2, 1.0, 1);
  CHECK(tiny.frame_total(1) == doctest::Approx(1.0 / 1024));
}

TEST_CASE("cost map: a uniform map scales to a uniform map" * doctest::test_suite("unit")) {
  CostMap u(30, 20, 4);  // edge tiles 2 wide: a uniform density, not uniform tile costs
  for (int r = 0; r < u.rows(); ++r)
    for (int c = 0; c < u.columns(); ++c) u.at(1, c, r) = 0.5 * static_cast<double>(u.tile_pixels(c, r)) / 16;
  CostMap s = u.scaled(45, 31, 4.0, 6);
  const double density = u.frame_total(1) / (30.0 * 20.0) * 4.0;  // per new pixel
  for (int r = 0; r < s.rows(); ++r)
    for (int c = 0; c < s.columns(); ++c)
      CHECK(s.at(1, c, r) / static_cast<double>(s.tile_pixels(c, r)) == doctest::Approx(density));
}

TEST_CASE("cost map: write and read round-trip" * doctest::test_suite("unit")) {
  auto dir = test_paths::temp_dir("cost_map_round_trip");
  CostMap m = small_map(3);
  m.at(2, 1, 1) = 123456.789012345;
  m.at(3, 0, 0) = 1e-12;
  m.note = "scene x.toml 10x7\nsecond line";
  const std::string path = (dir / "m.txt").string();
  m.write(path);
  CHECK(file_text(path).rfind("farm-cost-map 1\nwidth 10 height 7 tile 4 frames 3\nnote scene x.toml 10x7 second line\n",
                              0) == 0);
  CostMap r = CostMap::read(path);
  CHECK(r.width() == 10);
  CHECK(r.height() == 7);
  CHECK(r.tile() == 4);
  CHECK(r.frames() == 3);
  CHECK(r.note == "scene x.toml 10x7 second line");
  for (int f = 1; f <= 3; ++f)
    for (int row = 0; row < r.rows(); ++row)
      for (int c = 0; c < r.columns(); ++c) CHECK(r.at(f, c, row) == doctest::Approx(m.at(f, c, row)).epsilon(1e-8));
  // An empty note, Windows line ends and trailing blank lines are fine.
  CHECK(read_error(dir, "farm-cost-map 1\r\nwidth 2 height 1 tile 1 frames 1\r\nnote\r\n1 2\r\n\n  \n").empty());
  fs::remove_all(dir);
}

TEST_CASE("cost map: bad files are refused with the file and line named" * doctest::test_suite("unit")) {
  auto dir = test_paths::temp_dir("cost_map_bad");
  const std::string rows = "1 2 3\n4 5 6\n";
  struct Case {
    std::string text;
    int line;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"", 1, "ends where the magic line"},
      {"farm-cost-map 2\n", 1, "not a cost map"},
      {"P6\n10 7\n", 1, "not a cost map"},
      {"farm-cost-map 1\n", 2, "ends where the header"},
      {"farm-cost-map 1\nwidth 10 height 7 tile 4\nnote\n" + rows, 2, "'width W height H tile T frames F'"},
      {"farm-cost-map 1\nheight 7 width 10 tile 4 frames 1\nnote\n" + rows, 2, "'width W height H"},
      {header("width 0 height 7 tile 4 frames 1") + rows, 2, "width must be"},
      {header("width -10 height 7 tile 4 frames 1") + rows, 2, "width must be"},
      {header("width 10 height 65537 tile 4 frames 1") + rows, 2, "height must be"},
      {header("width 10 height 7 tile 4096000000000000000000 frames 1") + rows, 2, "tile must be"},
      {header("width 10 height 7 tile 0x4 frames 1") + rows, 2, "tile must be"},
      {header("width 10 height 7 tile 4 frames 100001") + rows, 2, "frames must be"},
      {header("width 10.5 height 7 tile 4 frames 1") + rows, 2, "width must be"},
      {header("width 65536 height 65536 tile 1 frames 1"), 2, "exceed the limit"},
      {header("width 4096 height 4096 tile 1 frames 100"), 2, "exceed the limit"},
      {"farm-cost-map 1\nwidth 10 height 7 tile 4 frames 1\n", 3, "ends where the note"},
      {"farm-cost-map 1\nwidth 10 height 7 tile 4 frames 1\nnotes x\n" + rows, 3, "'note'"},
      {header() + "1 2 x\n4 5 6\n", 4, "cost 3 ('x') is not a number"},
      {header() + "1 2 3\n4 5 6e\n", 5, "is not a number"},
      {header() + "1 2 3\n4 nan 6\n", 5, "not finite"},
      {header() + "1 2 3\n4 inf 6\n", 5, "not finite"},
      {header() + "1 2 3\n4 1e999 6\n", 5, "out of range"},
      {header() + "1 -2 3\n4 5 6\n", 4, "negative"},
      {header() + "1 2\n4 5 6\n", 4, "expected 3 costs (row 1 of frame 1), found 2"},
      {header() + "1 2 3\n4 5 6 7\n", 5, "expected 3 costs"},
      {header() + "1 2 3\n", 5, "ends where row 2 of 2 of frame 1"},
      {header() + "1 2 3\n4 5", 5, "found 2"},
      {header("width 10 height 7 tile 4 frames 2") + rows + "1 2 3\n", 7, "row 2 of 2 of frame 2"},
      {header() + rows + "7 8 9\n", 6, "unexpected data"},
      {header() + "1 2 3\n\n4 5 6\n", 5, "found 0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const std::string what = read_error(dir, c.text);
    CAPTURE(what);
    CHECK(what.find("'" + (dir / "bad.txt").string() + "', line " + std::to_string(c.line) + ":") != std::string::npos);
    CHECK(what.find(c.says) != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(CostMap::read((dir / "missing.txt").string()), doctest::Contains("missing.txt"), std::invalid_argument);
  // A line longer than any real one is refused without being read whole.
  CHECK(read_error(dir, header() + std::string(20 << 20, ' ')).find("line 4: line is longer") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("cost map: from whole blocks, each block's seconds spread over its pixels" * doctest::test_suite("unit")) {
  // A 10 x 7 image of frames 3 and 5 in blocks of 4 (edge blocks clipped to 2 and 3).
  std::vector<MeasuredBlock> blocks;
  double frame5 = 0;
  for (int f : {3, 5}) {
    for (const Block& b : tile_frame(f, 10, 7, 4)) {
      const double s = 0.01 * static_cast<double>(b.pixels()) * (b.x + 1) * f;
      blocks.push_back({b, s});
      if (f == 5) frame5 += s;
    }
  }
  blocks.push_back({{7, 0, 0, 4, 4}, 99.0});  // a frame not rendered: ignored
  CostMap m = cost_map_from_blocks(10, 7, {3, 5}, blocks);
  CHECK(m.tile() == 4);
  CHECK(m.frames() == 2);
  CHECK(m.frame_total(2) == doctest::Approx(frame5));
  for (const MeasuredBlock& mb : blocks)
    if (mb.block.frame == 3) CHECK(m.cost({1, mb.block.x, mb.block.y, mb.block.width, mb.block.height}) == doctest::Approx(mb.seconds));
  // Quadrants of a block split for a slow worker give a finer map; the clipped 1-pixel edge does not.
  std::vector<MeasuredBlock> mixed = {{{1, 0, 0, 2, 2}, 1.0}, {{1, 2, 0, 2, 2}, 1.0}, {{1, 0, 2, 4, 2}, 1.0},
                                      {{1, 4, 0, 1, 4}, 1.0}};
  CostMap fine = cost_map_from_blocks(5, 4, {1}, mixed);
  CHECK(fine.tile() == 2);
  CHECK(fine.total() == doctest::Approx(4.0));
  CHECK(cost_map_from_blocks(5, 4, {1}, {}).tile() == 4);
}

TEST_CASE("cost map: farm single --cost-map measures every tile and leaves the image byte-identical") {
  auto dir = test_paths::temp_dir("cost_map_single");
  const std::string scene = test_paths::project("scenes/wg6.toml");
  struct Run {
    std::string size_w, size_h, tile;
    int columns, rows;
  };
  for (const Run& r : {Run{"64", "48", "", 16, 12}, Run{"61", "45", "12", 6, 4}}) {
    CAPTURE(r.size_w);
    const std::vector<std::string> common = {"--width", r.size_w, "--height", r.size_h, "--spp", "32", "--threads", "1"};
    const std::string plain = (dir / "plain.exr").string(), measured = (dir / "measured.exr").string();
    const std::string map_path = (dir / "costs.txt").string(), log = (dir / "measured.log").string();
    std::vector<std::string> a = {k_farm, "single", scene, "-o", plain};
    a.insert(a.end(), common.begin(), common.end());
    REQUIRE(test_process::run(a, (dir / "plain.log").string()) == 0);
    std::vector<std::string> b = {k_farm, "single", scene, "-o", measured, "--cost-map", map_path};
    if (!r.tile.empty()) b.insert(b.end(), {"--cost-tile", r.tile});
    b.insert(b.end(), common.begin(), common.end());
    REQUIRE(test_process::run(b, log) == 0);
    CHECK(test_process::same_file(plain, measured));

    CostMap m = CostMap::read(map_path);
    CHECK(m.columns() == r.columns);
    CHECK(m.rows() == r.rows);
    CHECK(m.note.find("wg6.toml") != std::string::npos);
    for (int row = 0; row < m.rows(); ++row)
      for (int c = 0; c < m.columns(); ++c) CHECK(m.at(1, c, row) > 0);
    // One thread: its CPU seconds are close to the wall time of the render, unless other
    // processes share the cores (ctest -j2 with farm runs: a third of the wall time was seen).
    const std::string text = file_text(log);
    std::smatch match;
    REQUIRE(std::regex_search(text, match, std::regex("Render time +([0-9.]+) s \\(1 threads\\)")));
    const double render_seconds = std::stod(match[1]);
    CAPTURE(render_seconds);
    CAPTURE(m.total());
    CHECK(m.total() > render_seconds / 10);
    CHECK(m.total() < render_seconds * 3);
    CHECK(text.find("Cost map") != std::string::npos);
    CHECK(text.find("(" + std::to_string(r.columns) + " x " + std::to_string(r.rows) + " tiles of") != std::string::npos);
  }
  // Bad --cost-tile values and folders are usage errors.
  CHECK(test_process::run({k_farm, "single", scene, "-o", (dir / "x.png").string(), "--cost-map",
                           (dir / "c.txt").string(), "--cost-tile", "0"},
                          (dir / "e1.log").string()) == 2);
  CHECK(test_process::run({k_farm, "single", scene, "-o", (dir / "x.png").string(), "--cost-map",
                           (dir / "nowhere" / "c.txt").string()},
                          (dir / "e2.log").string()) == 2);
  fs::remove_all(dir);
}

TEST_CASE("cost map: the first tile does not carry the render's one-off costs") {
  // The pixel filter's table and a thread's first-render costs once made tile (0, 0) of a 1-spp
  // map 90x the median tile and 4x the costliest real one (chess2's top-left corner is cheap).
  auto dir = test_paths::temp_dir("cost_map_first_tile");
  const std::string map_path = (dir / "costs.txt").string();
  REQUIRE(test_process::run({k_farm, "single", test_paths::project("scenes/chess2.toml"), "-o",
                             (dir / "x.png").string(), "--width", "80", "--height", "60", "--spp", "1", "--threads",
                             "1", "--cost-map", map_path},
                            (dir / "run.log").string()) == 0);
  CostMap m = CostMap::read(map_path);
  double costliest_other = 0;
  for (int row = 0; row < m.rows(); ++row)
    for (int c = 0; c < m.columns(); ++c)
      if (row || c) costliest_other = std::max(costliest_other, m.at(1, c, row));
  CAPTURE(costliest_other);
  CHECK(m.at(1, 0, 0) < costliest_other);
  fs::remove_all(dir);
}

TEST_CASE("cost map: farm render --cost-map writes a map from the accepted blocks") {
  auto dir = test_paths::temp_dir("cost_map_render");
  const std::string scene = test_paths::project("scenes/wg6.toml"), map_path = (dir / "costs.txt").string();
  REQUIRE(test_process::run({k_farm, "render", scene, "-o", (dir / "farm.png").string(), "--width", "64", "--height",
                             "48", "--spp", "2", "--workers", "1", "--threads", "1", "--block", "16", "--policy",
                             "fixed", "--cost-map", map_path},
                            (dir / "render.log").string()) == 0);
  CostMap m = CostMap::read(map_path);
  CHECK(m.tile() == 16);
  CHECK(m.columns() == 4);
  CHECK(m.rows() == 3);
  CHECK(m.total() > 0);
  CHECK(m.note.find("farm master") != std::string::npos);
  fs::remove_all(dir);
}

TEST_SUITE_END();
