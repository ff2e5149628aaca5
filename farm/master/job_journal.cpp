#include "master/job_journal.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "master/frame_store.h"
#include "protocol/pixel_codec.h"
#include "scheduler/scheduler.h"

namespace farm {

JobJournal::JobJournal(const JobJournalOptions& o, const JobIdentity& job, const std::vector<int>& frames,
                       size_t bytes_per_pixel, FrameStore& store, Scheduler& scheduler)
    : m_options(o) {
  if (!o.enabled) return;
  const std::string& path = o.path;
  // Before the journal is even looked at: another process writing it would change it under us.
  m_lock = std::make_unique<JournalLock>(path);
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (exists && !o.resume && !o.fresh) {
    // Hours of work may be in it: never discard it silently.
    std::string what;
    try {
      JournalContents c = read_journal(path);
      what = "holds " + std::to_string(c.blocks.size()) + " rendered block(s) of an unfinished job";
    } catch (const JournalFormatError& e) {
      what = "exists but is not a valid journal (" + std::string(e.what()) + ")";
    } catch (const JournalError& e) {
      what = "exists but cannot be read (" + std::string(e.what()) + ")";
    }
    throw std::invalid_argument("'" + path + "' " + what +
                                ": pass --resume to continue that job, or --fresh to discard it and start over");
  }
  if (!exists || !o.resume) {
    if (o.resume) spdlog::info("no journal at {}: the job starts from the beginning", path);
    m_writer = std::make_unique<JournalWriter>(JournalWriter::create(path, job.text, o.sync_interval));
    return;
  }
  JournalContents c = read_journal(path);
  if (c.identity != job.text) {
    throw std::invalid_argument("the journal '" + path + "' belongs to another job; it differs in:\n" +
                                identity_difference(c.identity, job.text) +
                                "Pass the scene and settings it was written with, or --fresh to discard it");
  }
  // Read as `farm journal` reads it (one reader, one set of limits): the image its identity
  // describes, which the same identity makes this job's.
  IdentityImage image;
  if (Status unreadable = identity_image(c.identity, image); !unreadable.ok()) {
    throw std::invalid_argument("the journal '" + path + "' cannot be resumed: " + unreadable.message() +
                                "; pass --fresh to discard it");
  }
  const SchedulerConfig& s = scheduler.config();
  FARM_CHECK(image.width == s.width && image.height == s.height && image.frames == frames &&
             proto::bytes_per_pixel(image.encoding, image.carried_floats()) == bytes_per_pixel);
  Status problem = check_journal_blocks(c.blocks, image, false);
  if (!problem.ok()) {
    throw std::invalid_argument("the journal '" + path + "' is inconsistent (" + problem.message() +
                                "); pass --fresh to discard it");
  }
  if (!c.damage.empty()) {
    // Not a crash's torn tail: something changed the file. What it took is rendered again.
    std::string report = journal_damage_report(c);
    report.pop_back();  // its last line's newline: spdlog ends the message with one
    spdlog::warn("the journal '{}' is damaged in the middle; it is rewritten from its valid records:\n{}", path,
                 report);
  }
  std::vector<Block> done;
  int64_t pixels = 0;
  for (const JournalBlock& b : c.blocks) {
    store.place(b.rect, b.pixels);
    done.push_back(b.rect);
    pixels += b.rect.pixels();
  }
  m_writer = std::make_unique<JournalWriter>(JournalWriter::resume(path, c, o.sync_interval));
  m_epoch = m_writer->epoch();
  scheduler.restore(done, m_writer->first_attempt());
  m_resumed_blocks = done.size();
  spdlog::info("resuming job {:x} from {} (start {}): {} block(s), {:.1f}% of the pixels, already rendered{}", job.id, path, m_epoch + 1,
               done.size(), 100.0 * pixels / scheduler.total_pixels(),
               c.torn_bytes ? fmt::format("; {} byte(s) of a torn last record cut off", c.torn_bytes) : "");
}

void JobJournal::lost(const JournalError& e) {
  // The render itself is unaffected; only a crash from now on would lose work.
  spdlog::error("{}: the job goes on without a journal (a crash now would lose the work done)", e.what());
  m_writer.reset();
}

void JobJournal::record(AttemptId attempt, WorkerId worker, const Block& block, double render_seconds,
                        const std::vector<uint8_t>& pixels) {
  if (!m_writer) return;
  try {
    m_writer->block(attempt, worker, block, render_seconds, pixels);
    m_writer->sync_if_due();
  } catch (const JournalError& e) {
    lost(e);
  }
}

void JobJournal::sync_if_due() {
  if (!m_writer) return;
  try {
    m_writer->sync_if_due();
  } catch (const JournalError& e) {
    lost(e);
  }
}

std::string JobJournal::stop_hint(uint64_t completed_blocks) {
  if (!m_writer) return "";
  try {
    m_writer->close();
  } catch (const JournalError& e) {
    return " (" + std::string(e.what()) + ")";
  }
  const uint64_t kept = completed_blocks + m_resumed_blocks;
  if (kept == 0) {
    // Nothing to keep: a journal would only make the next run ask for --resume or --fresh.
    std::error_code ec;
    std::filesystem::remove(m_options.path, ec);
    return "";
  }
  return "; the " + std::to_string(kept) + " block(s) rendered so far are kept in the journal '" + m_options.path +
         "': run the same command with --resume to continue";
}

bool JobJournal::close() {
  if (!m_writer) return false;
  try {
    m_writer->close();
  } catch (const JournalError& e) {
    spdlog::error("{}", e.what());
    return false;
  }
  return true;
}

void JobJournal::remove_unless(bool keep) {
  if (!m_options.enabled || keep) return;
  std::error_code ec;
  std::filesystem::remove(m_options.path, ec);
}

}  // namespace farm
