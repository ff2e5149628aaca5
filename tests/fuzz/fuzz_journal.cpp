// Journals (master/journal_format.h): parse_journal must refuse a file without a valid header
// with JournalError and otherwise account for every byte (valid, damaged, torn); a journal it
// accepts must pass or fail the resume checks (exactly once, pixel sizes) without overflow,
// and blocks that pass must place into the image without touching memory outside it.
//
// Structure-aware: a random byte flip almost never survives a 128-bit checksum, so the custom
// mutator splits the input into records, changes their fields (lengths, counts, rectangles,
// epochs, numbers, checksums, order; truncation, duplication, garbage between records) and
// frames them again with correct checksums, unless the mutation is a bad checksum.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "master/frame_store.h"
#include "master/journal.h"
#include "master/journal_format.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using farm::k_journal_block_head;
using farm::k_journal_record_head;

// The image every block is checked against (identity aside: the parser does not read it).
constexpr int k_width = 16, k_height = 8;
const std::vector<int> k_frames = {1, 2};
constexpr size_t k_bytes_per_pixel = 3;  // srgb8

struct Rec {
  uint32_t number = 0;
  std::vector<uint8_t> body;
  bool bad_checksum = false;
};

struct Model {
  std::vector<Rec> records;
  std::vector<uint8_t> tail;  // bytes after the last framed record
};

uint32_t u32_at(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }

// Records by their framing alone (checksums not checked: the mutator keeps damaged ones too).
Model split(const uint8_t* data, size_t size) {
  Model m;
  size_t off = 0;
  while (size - off >= k_journal_record_head && std::memcmp(data + off, "fjr2", 4) == 0) {
    const uint32_t length = u32_at(data + off + 8);
    if (length > size - off - k_journal_record_head) break;
    Rec r;
    r.number = u32_at(data + off + 4);
    r.body.assign(data + off + k_journal_record_head, data + off + k_journal_record_head + length);
    std::vector<uint8_t> again = farm::journal_record(r.number, r.body);
    r.bad_checksum = std::memcmp(again.data(), data + off, k_journal_record_head) != 0;
    m.records.push_back(std::move(r));
    off += k_journal_record_head + length;
  }
  m.tail.assign(data + off, data + size);
  return m;
}

std::vector<uint8_t> join(const Model& m) {
  std::vector<uint8_t> out;
  for (const Rec& r : m.records) {
    std::vector<uint8_t> framed = farm::journal_record(r.number, r.body);
    if (r.bad_checksum) framed[12] ^= 0x01;
    out.insert(out.end(), framed.begin(), framed.end());
  }
  out.insert(out.end(), m.tail.begin(), m.tail.end());
  return out;
}

Model starter() {
  Model m;
  m.records.push_back({0, farm::journal_header_body("width=16\nheight=8\nframes=1,2\n")});
  m.records.push_back({1, farm::journal_epoch_body(0)});
  farm::Block b{1, 0, 0, 8, 8};
  m.records.push_back({2, farm::journal_block_body(0, 1, 1, b, 0.5, std::vector<uint8_t>(64 * 3, 7))});
  return m;
}

int32_t interesting(std::mt19937& rng) {
  static const int32_t values[] = {0, 1, -1, 2, 4, 7, 8, 15, 16, 17, 4096, 65535, 65536, 0x7fffffff, -0x7fffffff - 1,
                                   0x40000000, 46341};
  return rng() % 3 == 0 ? static_cast<int32_t>(rng() % 32) : values[rng() % (sizeof values / sizeof values[0])];
}

void set_i32(std::vector<uint8_t>& body, size_t at, int32_t v) {
  if (body.size() < at + 4) return;
  for (int i = 0; i < 4; ++i) body[at + i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i));
}

void mutate(Model& m, std::mt19937& rng, size_t max_size) {
  if (m.records.empty()) m = starter();
  Rec& r = m.records[rng() % m.records.size()];
  switch (rng() % 13) {
    case 0: {  // a block's rectangle or frame: the fields that index memory
      if (r.body.empty() || r.body[0] != 'B') break;
      set_i32(r.body, 1 + 4 + 8 + 4 + 4 * (rng() % 5), interesting(rng));
      break;
    }
    case 1: {  // a block's pixels resized to what its rectangle needs, or off by some
      if (r.body.size() < k_journal_block_head || r.body[0] != 'B') break;
      const uint8_t* p = r.body.data() + 1 + 4 + 8 + 4 + 4 * 3;
      const int64_t w = static_cast<int32_t>(u32_at(p)), h = static_cast<int32_t>(u32_at(p + 4));
      if (w < 0 || h < 0 || w > 4096 || h > 4096) break;  // no body that large fits max_size anyway
      int64_t n = w * h * static_cast<int64_t>(k_bytes_per_pixel);
      if (rng() % 2) n += static_cast<int64_t>(rng() % 7) - 3;
      if (n >= 0 && static_cast<uint64_t>(n) < max_size) r.body.resize(k_journal_block_head + static_cast<size_t>(n), 9);
      break;
    }
    case 2:  // epoch or attempt of a block, epoch of an 'E'
      if (r.body.size() >= 5) set_i32(r.body, 1, interesting(rng));
      break;
    case 3:  // the record type
      if (!r.body.empty()) r.body[0] = "HEBX"[rng() % 4];
      break;
    case 4:  // the number: a gap, a repeat, or out of order
      r.number = rng() % 2 ? r.number + 1 + rng() % 3 : static_cast<uint32_t>(rng() % (m.records.size() + 2));
      break;
    case 5:
      r.bad_checksum = !r.bad_checksum;
      break;
    case 6: {  // duplication: the same record again, renumbered or not
      Rec copy = r;
      if (rng() % 2) copy.number = m.records.back().number + 1;
      m.records.insert(m.records.begin() + static_cast<long>(rng() % (m.records.size() + 1)), copy);
      break;
    }
    case 7:
      if (m.records.size() > 1) m.records.erase(m.records.begin() + static_cast<long>(rng() % m.records.size()));
      break;
    case 8: {  // a new block that fits the image, numbered next
      farm::Block b{k_frames[rng() % 2], static_cast<int>(rng() % k_width), static_cast<int>(rng() % k_height), 1, 1};
      b.width = 1 + static_cast<int>(rng() % (k_width - b.x));
      b.height = 1 + static_cast<int>(rng() % (k_height - b.y));
      std::vector<uint8_t> pixels(static_cast<size_t>(b.pixels()) * k_bytes_per_pixel, static_cast<uint8_t>(rng()));
      m.records.push_back({m.records.back().number + 1, farm::journal_block_body(0, rng() % 100, 1, b, 0.1, pixels)});
      break;
    }
    case 9: {  // bytes inside one body, by libFuzzer's own mutations
      if (r.body.empty()) break;
      const size_t old = r.body.size();
      r.body.resize(old + 16);
      r.body.resize(LLVMFuzzerMutate(r.body.data(), old, r.body.size()));
      if (r.body.empty()) r.body.push_back('B');
      break;
    }
    case 10:  // garbage after the records: a torn tail, or damage if more records follow
      m.tail.resize(rng() % 64, static_cast<uint8_t>(rng()));
      break;
    case 11: {  // truncation in the middle of the last record (a crash)
      std::vector<uint8_t> last = farm::journal_record(m.records.back().number, m.records.back().body);
      m.records.pop_back();
      last.resize(rng() % last.size());
      m.tail = last;
      break;
    }
    default: {  // garbage between two records, then they go on: mid-file damage to resynchronise
      std::vector<uint8_t> junk(1 + rng() % 40, static_cast<uint8_t>(rng()));
      if (rng() % 2 && junk.size() >= 4) std::memcpy(junk.data(), "fjr2", 4);  // a false start
      Rec gap{r.number, junk, true};
      m.records.insert(m.records.begin() + static_cast<long>(rng() % (m.records.size() + 1)), gap);
      break;
    }
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  Model m = split(data, size);
  for (unsigned i = 0, n = 1 + rng() % 3; i < n; ++i) mutate(m, rng, max_size);
  std::vector<uint8_t> out = join(m);
  if (out.size() > max_size) out.resize(max_size);
  if (!out.empty()) std::memcpy(data, out.data(), out.size());  // memcpy from an empty vector: null
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  farm::JournalContents c;
  try {
    c = farm::parse_journal(data, size, "fuzz.journal");
  } catch (const farm::JournalFormatError&) {  // not a journal: the user's file
    return 0;
  } catch (const farm::JournalError&) {
    return 0;
  }
  // Every byte is accounted for, the damage in order and inside the file.
  if (c.valid_bytes + c.torn_bytes != size || c.valid_bytes > size) __builtin_trap();
  uint64_t end = 0;
  for (const farm::JournalDamage& d : c.damage) {
    if (d.offset < end || d.bytes == 0 || d.offset + d.bytes > c.valid_bytes) __builtin_trap();
    end = d.offset + d.bytes;
  }
  if (c.blocks.size() >= c.records) __builtin_trap();  // the header is a record too
  (void)farm::journal_damage_report(c);
  // What a resume does with it: check, then place into the image.
  if (!farm::check_exactly_once(c.blocks, k_width, k_height, k_frames, false).ok()) return 0;
  if (!farm::check_pixel_sizes(c.blocks, k_bytes_per_pixel).ok()) return 0;
  farm::FrameStore store(k_width, k_height, k_frames, farm::proto::PixelEncoding::srgb8);
  for (const farm::JournalBlock& b : c.blocks) store.place(b.rect, b.pixels);
  return 0;
}
