#include "master/journal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <map>
#include <sstream>

#include "protocol/pixel_codec.h"

namespace farm {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw JournalError("cannot write the journal '" + path + "': " + errno_text());
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Writes `records` to a new file beside `path`, synced and renamed over it, then syncs the
// folder: a crash leaves either the old file or the whole new one.
void replace_file(const std::string& path, const std::vector<std::vector<uint8_t>>& records) {
  const std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw JournalError("cannot create the journal '" + temp + "': " + errno_text());
  try {
    for (const std::vector<uint8_t>& record : records) write_all(fd, record.data(), record.size(), temp);
    if (::fsync(fd) != 0) throw JournalError("cannot sync the journal '" + temp + "': " + errno_text());
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      throw JournalError("cannot rename '" + temp + "' to '" + path + "': " + errno_text());
    }
  } catch (...) {
    ::close(fd);
    std::remove(temp.c_str());
    throw;
  }
  ::close(fd);
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

std::map<std::string, std::string> identity_fields(const std::string& identity) {
  std::map<std::string, std::string> fields;
  std::istringstream in(identity);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    fields[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return fields;
}

}  // namespace

JournalContents read_journal(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would wait for a writer forever (`farm journal FIFO`
  // hung); it is then refused below as not a regular file. Harmless on a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    // A path that names no file is the user's (bad input); the OS failing to read one is not.
    const bool named_wrongly = errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG;
    const std::string message = "cannot read the journal '" + path + "': " + errno_text();
    if (named_wrongly) throw JournalFormatError(message);
    throw JournalError(message);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw JournalError("cannot read the journal '" + path + "': " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw JournalFormatError("the journal '" + path + "' is not a regular file (a FIFO, device or folder)");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return parse_journal(nullptr, 0, path);  // throws: not a journal
  }
  // Mapped, not read: a journal holds every rendered pixel, and the blocks copy them once.
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const std::string why = errno_text();
  ::close(fd);
  if (map == MAP_FAILED) throw JournalError("cannot read the journal '" + path + "': " + why);
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() { ::munmap(p, n); }
  } unmap{map, size};
  return parse_journal(static_cast<const uint8_t*>(map), size, path);
}

namespace {

std::string block_name(const std::vector<JournalBlock>& blocks, size_t i) {
  const Block& r = blocks[i].rect;
  std::ostringstream name;
  name << "block " << i + 1 << " (frame " << r.frame << ", " << r.width << "x" << r.height << " at " << r.x << "," << r.y
       << ", attempt " << blocks[i].attempt << ")";
  return name.str();
}

// One frame's blocks swept from top to bottom: the rectangles crossing the sweep line are kept
// by their x range, so an overlap is a neighbour in that map, and a row is whole when their
// widths add up to the image's. O(n log n) in the blocks, whatever the image size: a bitmap of
// the image let a crafted identity (65536 x 65536, many frames) ask for terabytes.
struct FrameSweep {
  const std::vector<JournalBlock>& blocks;
  int width, height;
  std::string overlap, gap;  // the first of each found

  void run(int frame, const std::vector<size_t>& mine) {
    struct Event {
      int y;
      bool add;  // removals first at the same y: rows are half-open
      size_t block;
    };
    std::vector<Event> events;
    events.reserve(2 * mine.size());
    for (size_t i : mine) {
      events.push_back({blocks[i].rect.y, true, i});
      events.push_back({blocks[i].rect.y + blocks[i].rect.height, false, i});
    }
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return a.y != b.y ? a.y < b.y : (a.add != b.add ? !a.add : a.block < b.block);
    });
    std::map<int, std::pair<int, size_t>> active;  // x0 -> (x1, block)
    int64_t covered = 0;                            // width of the row under the sweep line
    int row = 0;                                    // the first row not yet known whole
    auto check_rows_to = [&](int y) {
      if (y > row && covered < width && gap.empty()) {
        int x = 0;
        for (const auto& [x0, span] : active) {
          if (x0 > x) break;
          x = span.first;
        }
        gap = "pixel " + std::to_string(x) + "," + std::to_string(row) + " of frame " + std::to_string(frame) +
              " was never committed";
      }
      row = std::max(row, y);
    };
    for (const Event& e : events) {
      check_rows_to(e.y);
      const Block& r = blocks[e.block].rect;
      if (!e.add) {
        active.erase(r.x);
        covered -= r.width;
        continue;
      }
      const int x1 = r.x + r.width;
      auto next = active.lower_bound(r.x);
      size_t other = blocks.size();
      if (next != active.end() && next->first < x1) other = next->second.second;
      if (next != active.begin() && std::prev(next)->second.first > r.x) other = std::prev(next)->second.second;
      if (other != blocks.size()) {
        const Block& o = blocks[other].rect;
        overlap = block_name(blocks, std::max(e.block, other)) + " commits pixel " + std::to_string(std::max(r.x, o.x)) +
                  "," + std::to_string(std::max(r.y, o.y)) + " a second time";
        return;
      }
      active.emplace(r.x, std::make_pair(x1, e.block));
      covered += r.width;
    }
    check_rows_to(height);
  }
};

}  // namespace

Status check_exactly_once(const std::vector<JournalBlock>& blocks, int width, int height,
                        const std::vector<int>& frames, bool complete) {
  std::map<int, std::vector<size_t>> by_frame;
  for (int f : frames) by_frame[f];
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& r = blocks[i].rect;
    auto f = by_frame.find(r.frame);
    // In 64 bits: x + width of a crafted journal must not wrap round to pass the check.
    if (f == by_frame.end() || r.width < 1 || r.height < 1 || r.x < 0 || r.y < 0 ||
        int64_t{r.x} + r.width > width || int64_t{r.y} + r.height > height) {
      return Status::error(block_name(blocks, i) + " lies outside the job's frames");
    }
    f->second.push_back(i);
  }
  std::string first_gap;
  for (const auto& [frame, mine] : by_frame) {
    FrameSweep sweep{blocks, width, height, {}, {}};
    sweep.run(frame, mine);
    if (!sweep.overlap.empty()) return Status::error(sweep.overlap);
    if (first_gap.empty()) first_gap = sweep.gap;
  }
  if (complete && !first_gap.empty()) return Status::error(first_gap);
  return {};
}

Status check_pixel_sizes(const std::vector<JournalBlock>& blocks, size_t bytes_per_pixel) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& r = blocks[i].rect;
    size_t expected = 0;
    if (r.width < 0 || r.height < 0 ||
        __builtin_mul_overflow(static_cast<size_t>(r.width), static_cast<size_t>(r.height), &expected) ||
        __builtin_mul_overflow(expected, bytes_per_pixel, &expected) || blocks[i].pixels.size() != expected) {
      return Status::error("block " + std::to_string(i + 1) + " has the wrong number of pixel bytes (" +
                           std::to_string(blocks[i].pixels.size()) + " for " + std::to_string(r.width) + "x" +
                           std::to_string(r.height) + " pixels)");
    }
  }
  return {};
}

Status check_journal_blocks(const std::vector<JournalBlock>& blocks, const IdentityImage& image, bool complete) {
  if (Status s = check_exactly_once(blocks, image.width, image.height, image.frames, complete); !s.ok()) return s;
  return check_pixel_sizes(blocks, proto::bytes_per_pixel(image.encoding, image.carried_floats()));
}

std::string identity_difference(const std::string& journal, const std::string& job) {
  auto a = identity_fields(journal), b = identity_fields(job);
  std::string out;
  for (const auto& [key, value] : b) {
    auto it = a.find(key);
    std::string theirs = it == a.end() ? "(absent)" : it->second;
    if (theirs != value) out += "  " + key + ": journal " + theirs + ", this job " + value + "\n";
  }
  for (const auto& [key, value] : a)
    if (!b.count(key)) out += "  " + key + ": journal " + value + ", this job (absent)\n";
  return out;
}

JournalWriter::JournalWriter(std::string path, int fd, uint32_t epoch, uint64_t next_number, double sync_interval)
    : m_path(std::move(path)),
      m_fd(fd),
      m_epoch(epoch),
      m_next_number(next_number),
      m_sync_interval(sync_interval),
      m_last_sync(steady_seconds()) {}

JournalWriter::JournalWriter(JournalWriter&& o) noexcept
    : m_path(std::move(o.m_path)),
      m_fd(o.m_fd),
      m_epoch(o.m_epoch),
      m_next_number(o.m_next_number),
      m_sync_interval(o.m_sync_interval),
      m_last_sync(o.m_last_sync),
      m_dirty(o.m_dirty) {
  o.m_fd = -1;
}

JournalWriter::~JournalWriter() {
  if (m_fd >= 0) ::close(m_fd);
}

JournalWriter JournalWriter::create(const std::string& path, const std::string& identity, double sync_interval) {
  replace_file(path, {journal_record(0, journal_header_body(identity)), journal_record(1, journal_epoch_body(0))});
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw JournalError("cannot open the journal '" + path + "': " + errno_text());
  return JournalWriter(path, fd, 0, 2, sync_interval);
}

JournalWriter JournalWriter::resume(const std::string& path, const JournalContents& contents, double sync_interval) {
  uint64_t valid_bytes = contents.valid_bytes;
  uint64_t next_number = contents.last_number + 1;
  if (!contents.damage.empty()) {
    // Renumbered without gaps, the epoch count kept (attempt ids of earlier starts stay unique).
    std::vector<std::vector<uint8_t>> records{journal_record(0, journal_header_body(contents.identity))};
    if (contents.epochs > 0) records.push_back(journal_record(1, journal_epoch_body(contents.epochs - 1)));
    for (const JournalBlock& b : contents.blocks) {
      records.push_back(journal_record(records.size(), journal_block_body(b.epoch, b.attempt, b.worker, b.rect,
                                                                          b.render_seconds, b.pixels)));
    }
    replace_file(path, records);
    valid_bytes = 0;
    for (const auto& r : records) valid_bytes += r.size();
    next_number = records.size();
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw JournalError("cannot open the journal '" + path + "': " + errno_text());
  // Cut off the torn tail so that new records follow the last valid one.
  if (::ftruncate(fd, static_cast<off_t>(valid_bytes)) != 0 ||
      ::lseek(fd, 0, SEEK_END) != static_cast<off_t>(valid_bytes)) {
    const std::string why = errno_text();
    ::close(fd);
    throw JournalError("cannot truncate the journal '" + path + "': " + why);
  }
  JournalWriter w(path, fd, contents.epochs, next_number, sync_interval);
  w.append(journal_epoch_body(w.m_epoch));
  w.sync();
  return w;
}

void JournalWriter::append(const std::vector<uint8_t>& body) {
  if (m_fd < 0) throw JournalError("the journal '" + m_path + "' is closed");
  std::vector<uint8_t> record = journal_record(m_next_number, body);
  write_all(m_fd, record.data(), record.size(), m_path);
  ++m_next_number;
  m_dirty = true;
}

void JournalWriter::block(AttemptId attempt, WorkerId worker, const Block& r, double render_seconds,
                          const std::vector<uint8_t>& pixels) {
  append(journal_block_body(m_epoch, attempt, worker, r, render_seconds, pixels));
}

void JournalWriter::sync() {
  if (m_fd < 0 || !m_dirty) return;
  if (::fdatasync(m_fd) != 0) throw JournalError("cannot sync the journal '" + m_path + "': " + errno_text());
  m_dirty = false;
  m_last_sync = steady_seconds();
}

void JournalWriter::sync_if_due() {
  if (m_dirty && steady_seconds() - m_last_sync >= m_sync_interval) sync();
}

void JournalWriter::close() {
  if (m_fd < 0) return;
  sync();
  ::close(m_fd);
  m_fd = -1;
}

}  // namespace farm
