// The master's journal (master/journal.h) and resuming the scheduler from it: a block is in
// the journal wholly or not at all, whatever instant a crash cuts the file; a resumed job
// keeps the image covered exactly once; no pixel can be committed twice unnoticed.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "test_paths.h"
#include "master/frame_store.h"
#include "master/job_journal.h"
#include "master/journal.h"
#include "scheduler/scheduler.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> pixels_for(const Block& b, uint8_t seed) {
  std::vector<uint8_t> p(static_cast<size_t>(b.pixels()) * 3);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>(seed + i * 7);
  return p;
}

const std::string k_identity = "scene=abc\nwidth=20\nheight=10\nframes=1\n";

// Journal with `blocks` (epoch 0) at `path`; returns the file's size after each record.
std::vector<uintmax_t> write_journal(const std::string& path, const std::vector<Block>& blocks) {
  JournalWriter w = JournalWriter::create(path, k_identity, 0);
  std::vector<uintmax_t> sizes{fs::file_size(path)};
  for (size_t i = 0; i < blocks.size(); ++i) {
    w.block(100 + i, 7, blocks[i], 0.5, pixels_for(blocks[i], static_cast<uint8_t>(i)));
    sizes.push_back(fs::file_size(path));
  }
  w.close();
  return sizes;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes, size_t size) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
}

}  // namespace

TEST_CASE("journal: blocks read back exactly, with their epoch, attempt, worker and pixels") {
  fs::path dir = test_paths::temp_dir("journal_roundtrip");
  const std::string path = (dir / "j").string();
  std::vector<Block> blocks = {{1, 0, 0, 8, 8}, {1, 8, 0, 12, 8}, {1, 0, 8, 20, 2}};
  write_journal(path, blocks);
  JournalContents c = read_journal(path);
  CHECK(c.identity == k_identity);
  CHECK(c.epochs == 1);
  CHECK(c.torn_bytes == 0);
  REQUIRE(c.blocks.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(c.blocks[i].rect == blocks[i]);
    CHECK(c.blocks[i].attempt == 100 + i);
    CHECK(c.blocks[i].worker == 7);
    CHECK(c.blocks[i].epoch == 0);
    CHECK(c.blocks[i].render_seconds == 0.5);
    CHECK(c.blocks[i].pixels == pixels_for(blocks[i], static_cast<uint8_t>(i)));
  }
  CHECK(check_exactly_once(c.blocks, 20, 10, {1}, true).ok());
  fs::remove_all(dir);
}

TEST_CASE("journal: a crash cutting the file at any byte leaves whole blocks only, and resume cuts the torn tail") {
  fs::path dir = test_paths::temp_dir("journal_torn");
  const std::string path = (dir / "j").string();
  std::vector<Block> blocks = {{1, 0, 0, 8, 8}, {1, 8, 0, 12, 8}, {1, 0, 8, 20, 2}};
  std::vector<uintmax_t> sizes = write_journal(path, blocks);
  const std::vector<uint8_t> whole = read_bytes(path);
  // Every prefix that still holds the header: the blocks whose record ends within it, no more.
  for (size_t cut = sizes[0]; cut <= whole.size(); ++cut) {
    write_bytes(path, whole, cut);
    JournalContents c = read_journal(path);
    size_t expected = 0;
    while (expected < blocks.size() && sizes[expected + 1] <= cut) ++expected;
    REQUIRE_MESSAGE(c.blocks.size() == expected, "cut at byte " << cut);
    CHECK(c.valid_bytes == sizes[expected]);
    CHECK(c.torn_bytes == cut - sizes[expected]);
  }
  // Resuming a journal cut in the middle of the last record: the tail goes, a new epoch follows.
  write_bytes(path, whole, sizes[3] - 5);
  JournalContents torn = read_journal(path);
  REQUIRE(torn.blocks.size() == 2);
  {
    JournalWriter w = JournalWriter::resume(path, torn, 0);
    CHECK(w.epoch() == 1);
    CHECK(w.first_attempt() == (AttemptId{1} << 40) + 1);
    w.block(w.first_attempt(), 3, blocks[2], 0.25, pixels_for(blocks[2], 9));
    w.close();
  }
  JournalContents after = read_journal(path);
  CHECK(after.torn_bytes == 0);
  CHECK(after.epochs == 2);
  REQUIRE(after.blocks.size() == 3);
  CHECK(after.blocks[2].epoch == 1);
  CHECK(after.blocks[2].pixels == pixels_for(blocks[2], 9));
  CHECK(check_exactly_once(after.blocks, 20, 10, {1}, true).ok());
  fs::remove_all(dir);
}

TEST_CASE("journal: a damaged byte in the last record is a torn tail, a file without a valid header is refused") {
  fs::path dir = test_paths::temp_dir("journal_damage");
  const std::string path = (dir / "j").string();
  std::vector<Block> blocks = {{1, 0, 0, 8, 8}, {1, 8, 0, 12, 8}, {1, 0, 8, 20, 2}};
  std::vector<uintmax_t> sizes = write_journal(path, blocks);
  std::vector<uint8_t> bytes = read_bytes(path);
  bytes[sizes[2] + 30] ^= 0x40;  // inside the last block's record: nothing valid follows
  write_bytes(path, bytes, bytes.size());
  JournalContents c = read_journal(path);
  CHECK(c.blocks.size() == 2);
  CHECK(c.valid_bytes == sizes[2]);
  CHECK(c.damage.empty());

  bytes[10] ^= 1;  // the header's checksum no longer matches
  write_bytes(path, bytes, bytes.size());
  CHECK_THROWS_AS(read_journal(path), JournalFormatError);
  write_bytes(path, {'n', 'o', 'p', 'e'}, 4);
  CHECK_THROWS_AS(read_journal(path), JournalFormatError);
  write_bytes(path, {}, 0);
  CHECK_THROWS_AS(read_journal(path), JournalFormatError);
  try {
    read_journal((dir / "missing").string());
    FAIL("a missing journal was read");
  } catch (const JournalFormatError& e) {  // the user named no file: bad input
    CHECK(std::string(e.what()) == "cannot read the journal '" + (dir / "missing").string() + "': No such file or directory");
  }
  fs::remove_all(dir);
}

TEST_CASE("journal: damage in the middle names the record and what was lost and kept, and resume rewrites without it") {
  fs::path dir = test_paths::temp_dir("journal_mid_damage");
  const std::string path = (dir / "j").string();
  std::vector<Block> blocks = {{1, 0, 0, 8, 8}, {1, 8, 0, 12, 8}, {1, 0, 8, 4, 2}, {1, 4, 8, 16, 2}};
  std::vector<uintmax_t> sizes = write_journal(path, blocks);
  const std::vector<uint8_t> whole = read_bytes(path);
  // Records: 0 header, 1 epoch, 2..5 the blocks. Three bytes flipped in block 2's pixels (record 3).
  std::vector<uint8_t> bytes = whole;
  for (size_t i : {40, 41, 90}) bytes[sizes[1] + i] ^= 0x5a;
  write_bytes(path, bytes, bytes.size());
  JournalContents c = read_journal(path);
  REQUIRE(c.blocks.size() == 3);
  CHECK(c.blocks[1].rect == blocks[2]);
  CHECK(c.blocks[2].rect == blocks[3]);
  CHECK(c.torn_bytes == 0);
  REQUIRE(c.damage.size() == 1);
  CHECK(c.damage[0].record == 3);
  CHECK(c.damage[0].offset == sizes[1]);
  CHECK(c.damage[0].bytes == sizes[2] - sizes[1]);
  CHECK(c.damage[0].lost_records == 1);
  CHECK(c.damage[0].kept_after == 2);
  CHECK(journal_damage_report(c) == "record 3 (byte " + std::to_string(sizes[1]) + ", " +
                                        std::to_string(sizes[2] - sizes[1]) +
                                        " byte(s)) is damaged: 1 record(s) lost there, the 2 valid record(s) after it kept\n");

  // A damaged length field (records 3 and 4 unreadable as a pair): still resynchronised.
  bytes = whole;
  bytes[sizes[1] + 9] ^= 0x01;
  bytes[sizes[2] + 20] ^= 0x01;
  write_bytes(path, bytes, bytes.size());
  c = read_journal(path);
  REQUIRE(c.damage.size() == 1);
  CHECK(c.damage[0].record == 3);
  CHECK(c.damage[0].lost_records == 2);
  CHECK(c.damage[0].kept_after == 1);
  REQUIRE(c.blocks.size() == 2);
  CHECK(c.blocks[1].rect == blocks[3]);

  // Resume: rewritten from the valid records, the damage reported no more, the epochs kept.
  {
    JournalWriter w = JournalWriter::resume(path, c, 0);
    CHECK(w.epoch() == 1);
    w.block(w.first_attempt(), 3, blocks[1], 0.25, pixels_for(blocks[1], 9));
    w.close();
  }
  JournalContents after = read_journal(path);
  CHECK(after.damage.empty());
  CHECK(after.torn_bytes == 0);
  CHECK(after.epochs == 2);
  REQUIRE(after.blocks.size() == 3);
  CHECK(after.blocks[2].pixels == pixels_for(blocks[1], 9));
  fs::remove_all(dir);
}

TEST_CASE("journal: a format-1 journal is refused as such") {
  fs::path dir = test_paths::temp_dir("journal_v1");
  const std::string path = (dir / "j").string();
  // Format 1's header record: [u32 length][16-byte checksum]['H' "farm-journal-1" identity].
  std::string body = "Hfarm-journal-1" + k_identity;
  std::vector<uint8_t> bytes = {static_cast<uint8_t>(body.size()), 0, 0, 0};
  bytes.resize(20, 0xab);
  bytes.insert(bytes.end(), body.begin(), body.end());
  write_bytes(path, bytes, bytes.size());
  try {
    read_journal(path);
    FAIL("a format-1 journal was read");
  } catch (const JournalFormatError& e) {
    CHECK(std::string(e.what()) == "'" + path +
                                       "' is a journal of format 1 (an older farm); this farm reads format 2: finish that "
                                       "job with the farm that wrote it, or pass --fresh to discard it");
  }
  fs::remove_all(dir);
}

TEST_CASE("journal: checks on a crafted journal's numbers neither overflow nor pass") {
  auto block = [](Block r, size_t bytes) {
    JournalBlock b;
    b.rect = r;
    b.pixels.assign(bytes, 0);
    return b;
  };
  // x + width wraps round in 32 bits; the check must still see it is outside the image.
  CHECK_FALSE(check_exactly_once({block({1, 2147483647, 0, 2, 1}, 6)}, 20, 10, {1}, false).ok());
  CHECK_FALSE(check_exactly_once({block({1, 0, 2147483600, 4, 100}, 6)}, 20, 10, {1}, false).ok());
  // width x height x bytes per pixel overflowing size_t must not equal a small pixel count.
  CHECK_FALSE(check_pixel_sizes({block({1, 0, 0, 2147483647, 2147483647}, 0)}, 1ull << 62).ok());
  CHECK_FALSE(check_pixel_sizes({block({1, 0, 0, -2, -3}, 18)}, 3).ok());
  CHECK(check_pixel_sizes({block({1, 0, 0, 2, 3}, 18)}, 3).ok());
}

TEST_CASE("journal: the exactly-once check finds a pixel committed twice, outside the image, or never") {
  auto blocks_of = [](std::vector<Block> rects) {
    std::vector<JournalBlock> out;
    for (const Block& r : rects) out.push_back({0, 1, 1, r, 0, {}});
    return out;
  };
  CHECK(check_exactly_once(blocks_of({{1, 0, 0, 10, 10}, {1, 10, 0, 10, 10}}), 20, 10, {1}, true).ok());
  CHECK(check_exactly_once(blocks_of({{1, 0, 0, 10, 10}, {1, 9, 0, 10, 10}}), 20, 10, {1}, false).message().find("second time") !=
        std::string::npos);
  CHECK(check_exactly_once(blocks_of({{1, 15, 0, 10, 10}}), 20, 10, {1}, false).message().find("outside") != std::string::npos);
  CHECK(check_exactly_once(blocks_of({{2, 0, 0, 5, 5}}), 20, 10, {1}, false).message().find("outside") != std::string::npos);
  CHECK(check_exactly_once(blocks_of({{1, 0, 0, 10, 10}}), 20, 10, {1}, false).ok());
  CHECK(check_exactly_once(blocks_of({{1, 0, 0, 10, 10}}), 20, 10, {1}, true).message().find("never") != std::string::npos);
  CHECK(check_exactly_once(blocks_of({{1, 0, 0, 10, 10}}), 20, 10, {1}, true).message() ==
        "pixel 10,0 of frame 1 was never committed");

  // A crafted identity (65536 x 65536, 100000 frames) is checked without a bitmap of the image
  // (it asked for 400 TB); the answer comes from the blocks alone.
  std::vector<int> many(100000);
  for (int i = 0; i < 100000; ++i) many[i] = i + 1;
  CHECK(check_exactly_once(blocks_of({{7, 65000, 65000, 536, 536}}), 65536, 65536, many, false).ok());
  CHECK(check_exactly_once(blocks_of({{7, 65000, 65000, 536, 536}}), 65536, 65536, many, true).message() ==
        "pixel 0,0 of frame 1 was never committed");

  // The sweep against a bitmap on random tilings with holes and overlaps.
  std::mt19937 rng(26);
  for (int trial = 0; trial < 3000; ++trial) {
    const int w = 1 + static_cast<int>(rng() % 12), h = 1 + static_cast<int>(rng() % 9);
    std::vector<Block> rects;
    // A grid tiling, then some tiles dropped, and sometimes one extra rectangle on top.
    const int bw = 1 + static_cast<int>(rng() % 5), bh = 1 + static_cast<int>(rng() % 5);
    for (int y = 0; y < h; y += bh)
      for (int x = 0; x < w; x += bw)
        if (rng() % 8 != 0) rects.push_back({1 + static_cast<int>(rng() % 2), x, y, std::min(bw, w - x), std::min(bh, h - y)});
    if (rng() % 3 == 0) {
      const int x = static_cast<int>(rng() % w), y = static_cast<int>(rng() % h);
      rects.push_back({1 + static_cast<int>(rng() % 2), x, y, 1 + static_cast<int>(rng() % (w - x)), 1 + static_cast<int>(rng() % (h - y))});
    }
    std::shuffle(rects.begin(), rects.end(), rng);
    // The bitmap's answer: first any pixel twice, else the first pixel never committed.
    std::map<int, std::vector<int>> count = {{1, std::vector<int>(w * h)}, {2, std::vector<int>(w * h)}};
    bool twice = false;
    for (const Block& r : rects)
      for (int y = r.y; y < r.y + r.height; ++y)
        for (int x = r.x; x < r.x + r.width; ++x) twice |= ++count[r.frame][y * w + x] > 1;
    std::string never;
    for (const auto& [frame, c] : count)
      for (int i = 0; i < w * h && never.empty(); ++i)
        if (c[i] == 0) never = "pixel " + std::to_string(i % w) + "," + std::to_string(i / w) + " of frame " + std::to_string(frame) + " was never committed";
    const Status partial = check_exactly_once(blocks_of(rects), w, h, {1, 2}, false);
    const Status whole = check_exactly_once(blocks_of(rects), w, h, {1, 2}, true);
    CAPTURE(trial);
    CHECK(partial.ok() == !twice);
    if (twice) {
      CHECK(whole.message().find("a second time") != std::string::npos);
    } else {
      CHECK(whole.ok() == never.empty());
      if (!never.empty()) CHECK(whole.message() == never);
    }
  }
}

TEST_CASE("journal: `farm journal` and --resume read an identity with one reader, within the same limits") {
  // Before, `farm journal` read the image from the identity with its own limits (at most
  // 100000 frames) while --resume trusted the identity it matched: a .blend's 1048574 frames
  // were resumed but not shown. Now both read it with identity_image, the job's own limits.
  auto identity_of = [](int width, int height, int frames, const char* pixels) {
    std::string text = "scene=abc\nwidth=" + std::to_string(width) + "\nheight=" + std::to_string(height) + "\nframes=";
    for (int f = 1; f <= frames; ++f) text += std::to_string(f) + (f == frames ? "\n" : ",");
    return text + "pixels=" + pixels + "\n";
  };
  IdentityImage image;
  REQUIRE(identity_image(identity_of(20, 10, rt::k_max_frames, "srgb8"), image).ok());
  CHECK(image.width == 20);
  CHECK(image.height == 10);
  CHECK(image.frames.size() == static_cast<size_t>(rt::k_max_frames));
  CHECK(image.encoding == proto::PixelEncoding::srgb8);
  const std::string many = identity_of(1, 1, rt::k_max_frames + 1, "float32");
  CHECK(identity_image(many, image).message() == "the job's identity: 'frames' must be an integer in 1..100000, got 100001");
  CHECK(identity_image(identity_of(16385, 10, 1, "srgb8"), image).message() ==
        "the job's identity: 'width' must be an integer in 1..16384, got 16385");
  CHECK(identity_image(identity_of(16384, 16385, 1, "srgb8"), image).message() ==
        "the job's identity: 'height' must be an integer in 1..16384, got 16385");
  CHECK(identity_image(identity_of(16384, 16384, 2, "srgb8"), image).ok());  // 2^28 pixels: the most there are
  CHECK(identity_image("scene=abc\nwidth=20\nheight=10x\nframes=1\npixels=srgb8\n", image).message() ==
        "the job's identity does not give the image size, frames and pixel encoding");
  CHECK(identity_image("scene=abc\nwidth=20\nheight=10\nframes=1,1\npixels=srgb8\n", image).message() ==
        "the job's identity: frame 1 is named twice");
  CHECK(identity_image("scene=abc\nwidth=20\nheight=10\nframes=0\npixels=srgb8\n", image).message() ==
        "the job's identity: 'frame' must be an integer in 1..100000, got 0");

  // --resume of that journal by the job it belongs to refuses it with the same words.
  const fs::path dir = test_paths::temp_dir("journal_one_reader");
  const std::string path = (dir / "out.exr.journal").string();
  JournalWriter::create(path, many, 0).close();
  std::vector<int> frames;
  for (int f = 1; f <= rt::k_max_frames + 1; ++f) frames.push_back(f);
  SchedulerConfig config;
  config.width = config.height = 1;
  config.frames = frames;
  config.block_size = 1;
  Scheduler scheduler(config);
  FrameStore store(1, 1, frames, proto::PixelEncoding::float32);
  JobJournalOptions options;
  options.path = path;
  options.resume = true;
  const std::string refused = "the journal '" + path + "' cannot be resumed: the job's identity: 'frames' must be an "
                              "integer in 1..100000, got 100001; pass --fresh to discard it";
  CHECK_THROWS_WITH_AS(JobJournal(options, JobIdentity{many, 1}, frames, 12, store, scheduler), refused.c_str(),
                       std::invalid_argument);
  fs::remove_all(dir);
}

TEST_CASE("journal: identities that differ are reported key by key") {
  std::string d = identity_difference("scene=a\nspp=4\nwidth=20\n", "scene=a\nspp=8\nwidth=20\nheight=3\n");
  CHECK(d.find("spp: journal 4, this job 8") != std::string::npos);
  CHECK(d.find("height: journal (absent), this job 3") != std::string::npos);
  CHECK(d.find("scene") == std::string::npos);
}

TEST_CASE("scheduler: subtracting a block leaves exactly the pixels outside it") {
  const Block a{1, 10, 20, 16, 12};
  for (const Block& b : std::vector<Block>{{1, 14, 24, 4, 4}, {1, 0, 0, 12, 22}, {1, 20, 30, 30, 30}, {1, 0, 0, 40, 40},
                                           {1, 40, 40, 4, 4}, {2, 14, 24, 4, 4}, {1, 10, 20, 16, 1}}) {
    std::vector<Block> rest = subtract_block(a, b);
    for (int y = a.y; y < a.y + a.height; ++y) {
      for (int x = a.x; x < a.x + a.width; ++x) {
        const bool in_b = b.frame == a.frame && x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height;
        int count = 0;
        for (const Block& r : rest) count += x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height;
        REQUIRE(count == (in_b ? 0 : 1));
      }
    }
    for (const Block& r : rest) CHECK(r.pixels() > 0);
  }
}

TEST_CASE("scheduler: restore() removes committed blocks of any shape, keeps the cover exact, refuses overlaps") {
  SchedulerConfig c;
  c.width = 50;
  c.height = 37;
  c.frames = {1, 2};
  c.block_size = 16;
  std::mt19937 rng(11);
  for (int round = 0; round < 30; ++round) {
    // Every other round a policy whose pool is not in tiling order (costliest first).
    c.policy = round % 2 ? PolicyKind::factoring : PolicyKind::seed;
    c.block_cost = round % 2 ? [](const Block& b) { return static_cast<double>(b.pixels()) * (1 + (b.x * 7 + b.y * 3) % 5); }
                             : std::function<double(const Block&)>{};
    CAPTURE(round);
    // A random set of disjoint blocks: carve the frames with another block size, keep some.
    std::vector<Block> done;
    const int other = 3 + static_cast<int>(rng() % 30);
    for (int f : c.frames)
      for (const Block& b : tile_frame(f, c.width, c.height, other))
        if (rng() % 3 == 0) done.push_back(b);
    Scheduler s(c);
    s.restore(done, 1000);
    std::map<int, std::vector<int>> count;
    for (int f : c.frames) count[f].assign(static_cast<size_t>(c.width) * c.height, 0);
    auto add = [&](const Block& b) {
      for (int y = b.y; y < b.y + b.height; ++y)
        for (int x = b.x; x < b.x + b.width; ++x) ++count[b.frame][static_cast<size_t>(y) * c.width + x];
    };
    for (const Block& b : s.pending()) add(b);
    for (const Block& b : done) add(b);
    for (auto& [f, v] : count) REQUIRE(std::all_of(v.begin(), v.end(), [](int n) { return n == 1; }));
    int64_t done_pixels = 0;
    for (const Block& b : done) done_pixels += b.pixels();
    CHECK(s.completed_pixels() == done_pixels);
    CHECK(s.restored_blocks() == done.size());
    // Work goes on from there, with attempt ids of the new epoch.
    s.worker_joined(1, 0, 1);
    auto a = s.request(1, 0, 1);
    if (!s.pending().empty() || !a.empty()) {
      REQUIRE(a.size() == 1);
      CHECK(a[0].attempt == 1000);
    }
  }
  Scheduler s(c);
  CHECK_THROWS_AS(s.restore({{1, 0, 0, 10, 10}, {1, 5, 5, 10, 10}}, 1), std::invalid_argument);
  Scheduler t(c);
  CHECK_THROWS_AS(t.restore({{1, 45, 0, 10, 10}}, 1), std::invalid_argument);
  Scheduler u(c);
  CHECK_THROWS_AS(u.restore({{3, 0, 0, 10, 10}}, 1), std::invalid_argument);
  Scheduler full(c);
  full.restore({{1, 0, 0, 50, 37}, {2, 0, 0, 50, 37}}, 1);
  CHECK(full.done());
}

TEST_SUITE_END();
