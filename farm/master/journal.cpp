#include "master/journal.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace farm {

namespace {

constexpr char k_magic[] = "farm-journal-1";
constexpr size_t k_checksum_bytes = 16;
constexpr size_t k_record_head = 4 + k_checksum_bytes;
constexpr size_t k_block_head = 1 + 4 + 8 + 4 + 5 * 4 + 8;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string errno_text() { return std::strerror(errno); }

void checksum(const uint8_t* data, size_t size, uint8_t out[k_checksum_bytes]) {
  crypto_generichash(out, k_checksum_bytes, data, size, nullptr, 0);
}

// Little-endian fields, whatever the host.
template <typename T>
void put(std::vector<uint8_t>& out, T value) {
  uint64_t v;
  static_assert(sizeof(T) <= 8);
  if constexpr (std::is_same_v<T, double>) {
    std::memcpy(&v, &value, 8);
  } else {
    v = static_cast<uint64_t>(value);
  }
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

template <typename T>
T get(const uint8_t*& p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t{p[i]} << (8 * i);
  p += sizeof(T);
  if constexpr (std::is_same_v<T, double>) {
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  } else {
    return static_cast<T>(v);
  }
}

void write_all(int fd, const uint8_t* data, size_t size, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw JournalError("cannot write the journal '" + path + "': " + errno_text());
    data += n;
    size -= static_cast<size_t>(n);
  }
}

std::vector<uint8_t> framed(const std::vector<uint8_t>& body) {
  std::vector<uint8_t> out;
  out.reserve(k_record_head + body.size());
  put<uint32_t>(out, static_cast<uint32_t>(body.size()));
  uint8_t sum[k_checksum_bytes];
  checksum(body.data(), body.size(), sum);
  out.insert(out.end(), sum, sum + k_checksum_bytes);
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::vector<uint8_t> epoch_body(uint32_t epoch) {
  std::vector<uint8_t> body{'E'};
  put<uint32_t>(body, epoch);
  return body;
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw JournalError("cannot read the journal '" + path + "': " + errno_text());
  in.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  JournalContents c;
  uint64_t offset = 0;
  bool have_header = false;
  std::vector<uint8_t> body;
  for (;;) {
    uint8_t head[k_record_head];
    if (file_size - offset < k_record_head || !in.read(reinterpret_cast<char*>(head), k_record_head)) break;
    const uint8_t* p = head;
    const uint32_t size = get<uint32_t>(p);
    // A length past the end of the file is a torn record (or damage): stop before allocating.
    if (size == 0 || size > file_size - offset - k_record_head) break;
    body.resize(size);
    if (!in.read(reinterpret_cast<char*>(body.data()), size)) break;
    uint8_t sum[k_checksum_bytes];
    checksum(body.data(), body.size(), sum);
    if (std::memcmp(sum, head + 4, k_checksum_bytes) != 0) break;
    const uint8_t* b = body.data();
    const char type = static_cast<char>(body[0]);
    if (!have_header) {
      const size_t magic = sizeof k_magic - 1;
      if (type != 'H' || size < 1 + magic || std::memcmp(b + 1, k_magic, magic) != 0) break;
      c.identity.assign(reinterpret_cast<const char*>(b + 1 + magic), size - 1 - magic);
      have_header = true;
    } else if (type == 'E' && size == 5) {
      ++b;
      c.epochs = std::max(c.epochs, get<uint32_t>(b) + 1);
    } else if (type == 'B' && size >= k_block_head) {
      ++b;
      JournalBlock j;
      j.epoch = get<uint32_t>(b);
      j.attempt = get<uint64_t>(b);
      j.worker = get<uint32_t>(b);
      j.rect.frame = get<int32_t>(b);
      j.rect.x = get<int32_t>(b);
      j.rect.y = get<int32_t>(b);
      j.rect.width = get<int32_t>(b);
      j.rect.height = get<int32_t>(b);
      j.render_seconds = get<double>(b);
      j.pixels.assign(body.begin() + k_block_head, body.end());
      c.blocks.push_back(std::move(j));
    } else {
      break;  // a checksummed record we do not know: written by something else, stop here
    }
    offset += k_record_head + size;
  }
  if (!have_header) {
    throw JournalError("'" + path + "' is not a farm journal (no valid header; its creation may have been interrupted)");
  }
  c.valid_bytes = offset;
  c.torn_bytes = file_size - offset;
  return c;
}

Status check_exactly_once(const std::vector<JournalBlock>& blocks, int width, int height,
                        const std::vector<int>& frames, bool complete) {
  std::map<int, std::vector<uint8_t>> covered;
  for (int f : frames) covered[f].assign(static_cast<size_t>(width) * height, 0);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& r = blocks[i].rect;
    std::ostringstream name;
    name << "block " << i + 1 << " (frame " << r.frame << ", " << r.width << "x" << r.height << " at " << r.x << ","
         << r.y << ", attempt " << blocks[i].attempt << ")";
    auto f = covered.find(r.frame);
    if (f == covered.end() || r.width < 1 || r.height < 1 || r.x < 0 || r.y < 0 || r.x + r.width > width ||
        r.y + r.height > height) {
      return Status::error(name.str() + " lies outside the job's frames");
    }
    for (int y = r.y; y < r.y + r.height; ++y) {
      for (int x = r.x; x < r.x + r.width; ++x) {
        uint8_t& c = f->second[static_cast<size_t>(y) * width + x];
        if (c) return Status::error(name.str() + " commits pixel " + std::to_string(x) + "," + std::to_string(y) + " a second time");
        c = 1;
      }
    }
  }
  if (complete) {
    for (const auto& [frame, c] : covered) {
      for (size_t i = 0; i < c.size(); ++i) {
        if (!c[i]) {
          return Status::error("pixel " + std::to_string(i % width) + "," + std::to_string(i / width) + " of frame " +
                               std::to_string(frame) + " was never committed");
        }
      }
    }
  }
  return {};
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

JournalWriter::JournalWriter(std::string path, int fd, uint32_t epoch, double sync_interval)
    : m_path(std::move(path)), m_fd(fd), m_epoch(epoch), m_sync_interval(sync_interval), m_last_sync(steady_seconds()) {}

JournalWriter::JournalWriter(JournalWriter&& o) noexcept
    : m_path(std::move(o.m_path)),
      m_fd(o.m_fd),
      m_epoch(o.m_epoch),
      m_sync_interval(o.m_sync_interval),
      m_last_sync(o.m_last_sync),
      m_dirty(o.m_dirty) {
  o.m_fd = -1;
}

JournalWriter::~JournalWriter() {
  if (m_fd >= 0) ::close(m_fd);
}

JournalWriter JournalWriter::create(const std::string& path, const std::string& identity, double sync_interval) {
  const std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw JournalError("cannot create the journal '" + temp + "': " + errno_text());
  try {
    std::vector<uint8_t> header{'H'};
    header.insert(header.end(), k_magic, k_magic + sizeof k_magic - 1);
    header.insert(header.end(), identity.begin(), identity.end());
    for (const std::vector<uint8_t>& record : {framed(header), framed(epoch_body(0))}) {
      write_all(fd, record.data(), record.size(), temp);
    }
    if (::fsync(fd) != 0) throw JournalError("cannot sync the journal '" + temp + "': " + errno_text());
    if (std::rename(temp.c_str(), path.c_str()) != 0) {
      throw JournalError("cannot rename '" + temp + "' to '" + path + "': " + errno_text());
    }
  } catch (...) {
    ::close(fd);
    std::remove(temp.c_str());
    throw;
  }
  // The rename is durable once the folder is synced.
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  ::close(fd);
  fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw JournalError("cannot open the journal '" + path + "': " + errno_text());
  return JournalWriter(path, fd, 0, sync_interval);
}

JournalWriter JournalWriter::resume(const std::string& path, const JournalContents& contents, double sync_interval) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw JournalError("cannot open the journal '" + path + "': " + errno_text());
  // Cut off the torn tail so that new records follow the last valid one.
  if (::ftruncate(fd, static_cast<off_t>(contents.valid_bytes)) != 0 ||
      ::lseek(fd, 0, SEEK_END) != static_cast<off_t>(contents.valid_bytes)) {
    ::close(fd);
    throw JournalError("cannot truncate the journal '" + path + "': " + errno_text());
  }
  JournalWriter w(path, fd, contents.epochs, sync_interval);
  w.append(epoch_body(w.m_epoch));
  w.sync();
  return w;
}

void JournalWriter::append(const std::vector<uint8_t>& body) {
  if (m_fd < 0) throw JournalError("the journal '" + m_path + "' is closed");
  std::vector<uint8_t> record = framed(body);
  write_all(m_fd, record.data(), record.size(), m_path);
  m_dirty = true;
}

void JournalWriter::block(AttemptId attempt, WorkerId worker, const Block& r, double render_seconds,
                          const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> body;
  body.reserve(k_block_head + pixels.size());
  body.push_back('B');
  put<uint32_t>(body, m_epoch);
  put<uint64_t>(body, attempt);
  put<uint32_t>(body, worker);
  put<int32_t>(body, r.frame);
  put<int32_t>(body, r.x);
  put<int32_t>(body, r.y);
  put<int32_t>(body, r.width);
  put<int32_t>(body, r.height);
  put<double>(body, render_seconds);
  body.insert(body.end(), pixels.begin(), pixels.end());
  append(body);
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
