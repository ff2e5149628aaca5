// The master's use of its journal (master/journal.h): refusing to overwrite an unfinished
// job's journal, resuming from it, recording each accepted block before it is placed, and
// saying on a failed run how to continue. A journal error never stops the render: the job goes
// on without one (a crash from then on would lose the work done) and says so.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "job/job_identity.h"
#include "master/journal.h"
#include "master/journal_lock.h"

namespace farm {

class FrameStore;
class Scheduler;

struct JobJournalOptions {
  bool enabled = true;
  std::string path;  // resolved: never empty when enabled
  bool resume = false;
  bool fresh = false;
  double sync_interval = 0.2;
};

class JobJournal {
 public:
  // Creates the journal, or resumes it into `store` and `scheduler` (before any worker joins).
  // Throws std::runtime_error saying what to do when the journal belongs to an unfinished or
  // another job, is inconsistent, or is being written by another process (JournalLock).
  JobJournal(const JobJournalOptions& options, const JobIdentity& job, const std::vector<int>& frames,
             size_t bytes_per_pixel, FrameStore& store, Scheduler& scheduler);

  bool active() const { return m_writer != nullptr; }
  const std::string& path() const { return m_options.path; }
  uint64_t resumed_blocks() const { return m_resumed_blocks; }
  uint32_t epoch() const { return m_epoch; }

  // Durable before the pixels are placed: once a block counts as done it survives a crash.
  void record(AttemptId attempt, WorkerId worker, const Block& block, double render_seconds,
              const std::vector<uint8_t>& pixels);
  void sync_if_due();
  // For a job that stops unfinished: syncs and returns how to continue ("" if nothing to keep,
  // in which case the journal is removed).
  std::string stop_hint(uint64_t completed_blocks);
  // The job's images are about to be written: syncs and closes. False if the journal is not
  // whole (it was dropped after an error, or the final sync failed).
  bool close();
  // After the images are written: removes the journal unless it is kept.
  void remove_unless(bool keep);

 private:
  void lost(const JournalError& e);
  JobJournalOptions m_options;
  std::unique_ptr<JournalLock> m_lock;  // held while this object lives; outlives the writer
  std::unique_ptr<JournalWriter> m_writer;
  uint64_t m_resumed_blocks = 0;
  uint32_t m_epoch = 0;
};

}  // namespace farm
