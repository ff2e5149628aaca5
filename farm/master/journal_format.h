// The journal's bytes (format 2), apart from any file: framing and checksumming records, the
// bodies of the three record types, and parsing a whole journal held in memory. The file side
// (writing, syncing, locking) is master/journal.h; the fuzzer (tests/fuzz/fuzz_journal.cpp)
// drives this parser directly.
//
// A record is [marker "fjr2"][u32 number][u32 body length][16-byte BLAKE2b][body], integers
// little-endian. The checksum covers the number, the length and the body, so a damaged length
// is caught like a damaged pixel. Numbers count from 0 (the header) up by one per record: a
// reader that meets damage scans forward for the next valid record (marker, length within the
// file, checksum) whose number follows the last good one, and the gap in numbers says how many
// records the damage took. A match by chance needs a 128-bit checksum to agree, so resuming
// after the damage is safe; the records found there are kept.
// Bodies:
//   'H' "farm-journal-2", the job's identity (key=value lines)   (record 0)
//   'E' epoch: one per master start; attempt ids of epoch e start at e << 40
//   'B' epoch, attempt, worker, frame, x, y, width, height, render seconds, pixels
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scheduler/scheduler_types.h"

namespace farm {

// A journal that cannot be read or written (the OS's reason): a runtime failure.
struct JournalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A path that is not a journal this farm reads (no such file, not a regular file, no valid
// header, an older format): the user's, so it is bad input (docs/architecture.md, Errors), not a
// JournalError.
struct JournalFormatError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

inline constexpr size_t k_journal_record_head = 4 + 4 + 4 + 16;  // marker, number, length, checksum
inline constexpr size_t k_journal_block_head = 1 + 4 + 8 + 4 + 5 * 4 + 8;
// No record is longer: a block is at most k_max_block_side (4096) squared pixels of 12 bytes, 192 MiB.
inline constexpr uint32_t k_journal_max_body = 1u << 30;
static_assert(uint64_t{k_max_block_side} * k_max_block_side * 12 + k_journal_block_head <= k_journal_max_body,
              "a block of the largest side must fit one journal record");

struct JournalBlock {
  uint32_t epoch = 0;
  AttemptId attempt = 0;
  WorkerId worker = 0;
  Block rect;
  double render_seconds = 0;
  std::vector<uint8_t> pixels;  // the block's decoded pixels, rows of the block
};

// Damage in the middle of a journal: bytes that hold no valid record, followed by valid ones.
struct JournalDamage {
  uint64_t record = 0;       // number of the first record it took (the header is record 0)
  uint64_t offset = 0;       // where it starts in the file
  uint64_t bytes = 0;        // how many bytes were skipped
  uint64_t lost_records = 0;  // records it took (their blocks are rendered again)
  uint64_t kept_after = 0;   // valid records read after it (up to the next damage or the end)
};

struct JournalContents {
  std::string identity;
  uint32_t epochs = 0;  // master starts recorded (at least one more than any block's epoch)
  std::vector<JournalBlock> blocks;
  uint64_t records = 0;      // valid records read, header included
  uint64_t last_number = 0;  // number of the last valid record (the next one written is +1)
  uint64_t valid_bytes = 0;  // end of the last valid record
  uint64_t torn_bytes = 0;   // bytes after it: a record cut short by a crash
  std::vector<JournalDamage> damage;
};

// One record, ready to append.
std::vector<uint8_t> journal_record(uint64_t number, const std::vector<uint8_t>& body);
std::vector<uint8_t> journal_header_body(const std::string& identity);
std::vector<uint8_t> journal_epoch_body(uint32_t epoch);
std::vector<uint8_t> journal_block_body(uint32_t epoch, AttemptId attempt, WorkerId worker, const Block& rect,
                                        double render_seconds, const std::vector<uint8_t>& pixels);

// Parses a whole journal. `name` (the file's path) is only for messages. Throws JournalError if
// it does not start with a valid format-2 header, naming a format-1 journal as such.
JournalContents parse_journal(const uint8_t* data, size_t size, const std::string& name);

// One line per damage: "record 4 (byte 1234) is damaged: 1 record(s) lost, the 3 valid
// record(s) after it kept", "" if there is none.
std::string journal_damage_report(const JournalContents& contents);

}  // namespace farm
