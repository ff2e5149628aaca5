// The master's journal: every accepted block, made durable as it is committed, so that
// `farm master --resume` after a crash (kill -9, power loss) continues the same job and
// re-renders at most the blocks that were in flight.
//
// One append-only file of checksummed records (format 2, master/journal_format.h): a record
// counts only if it is complete and its checksum matches, so a write torn by a crash is
// recognised and cut off before the next append. This is the "write, checksum, append"
// equivalent of temp -> fsync -> rename: a block is either wholly in the journal or absent.
// Damage in the middle of the file (a bad disk, a stray write) costs only the records it hit:
// the reader resynchronises on the next valid record and says what was lost.
// One process writes a journal at a time: JournalLock (master/journal_lock.h).
//
// Durability: each record reaches the kernel with one write() before the block is placed in
// the image, which survives kill -9 of the master. fdatasync runs at most every
// `sync_interval` seconds and when the journal closes: a power loss can lose that window's
// blocks (they are rendered again), never tear or corrupt one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/job_identity.h"
#include "master/journal_format.h"
#include "scheduler/scheduler_types.h"

namespace farm {

// Reads a whole journal. Throws JournalError naming the file if it cannot be read (with the OS's
// reason) or does not start with a valid header (then it is not a journal, one of format 1, or
// its creation was torn).
JournalContents read_journal(const std::string& path);

// Ok if the blocks lie inside the frames and no pixel is committed twice; with `complete`,
// also every pixel of every frame once. Otherwise the first problem, naming the block. Safe for
// any numbers a damaged or crafted journal holds (no overflow, no index outside the frames).
Status check_exactly_once(const std::vector<JournalBlock>& blocks, int width, int height,
                               const std::vector<int>& frames, bool complete);

// Differences between two identities, one "key: journal X, this job Y" per line.
// Ok if every block holds width x height x `bytes_per_pixel` bytes of pixels (the product
// checked for overflow), else the first block that does not.
Status check_pixel_sizes(const std::vector<JournalBlock>& blocks, size_t bytes_per_pixel);

std::string identity_difference(const std::string& journal, const std::string& job);

// What `farm journal` and --resume both ask of a journal's blocks, given the image its identity
// describes (job/job_identity.h, identity_image): check_exactly_once, then check_pixel_sizes for
// the identity's pixel encoding.
Status check_journal_blocks(const std::vector<JournalBlock>& blocks, const IdentityImage& image, bool complete);

class JournalWriter {
 public:
  // A new journal holding only the header (written to a temporary file, synced and renamed
  // over `path`, so a crash leaves either no journal or a valid empty one).
  static JournalWriter create(const std::string& path, const std::string& identity, double sync_interval);
  // Continues `contents` (read from `path`): cuts off its torn tail and records a new epoch. A
  // journal with damage in the middle is first rewritten from its valid records (temporary file,
  // synced, renamed), so the damage is reported once, not on every later read.
  static JournalWriter resume(const std::string& path, const JournalContents& contents, double sync_interval);

  JournalWriter(JournalWriter&& other) noexcept;
  JournalWriter& operator=(JournalWriter&&) = delete;
  ~JournalWriter();

  uint32_t epoch() const { return m_epoch; }
  // First attempt id of this epoch: leases of earlier runs can never be confused with ours.
  AttemptId first_attempt() const { return (AttemptId{m_epoch} << 40) + 1; }

  // Appends one accepted block. Throws JournalError on an I/O error (disk full, ...).
  void block(AttemptId attempt, WorkerId worker, const Block& rect, double render_seconds,
             const std::vector<uint8_t>& pixels);
  // fdatasync if the last one is older than the sync interval.
  void sync_if_due();
  // Syncs and closes. Throws JournalError if the final sync fails.
  void close();

  const std::string& path() const { return m_path; }

 private:
  JournalWriter(std::string path, int fd, uint32_t epoch, uint64_t next_number, double sync_interval);
  void append(const std::vector<uint8_t>& body);
  void sync();

  std::string m_path;
  int m_fd = -1;
  uint32_t m_epoch = 0;
  uint64_t m_next_number = 0;  // of the next record appended
  double m_sync_interval = 0;
  double m_last_sync = 0;
  bool m_dirty = false;
};

}  // namespace farm
