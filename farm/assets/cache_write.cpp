#include "assets/cache_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace farm {

namespace {

constexpr size_t k_probe_bytes = 4096;  // one block: what any file needs once it holds data

std::string os_reason(int error) { return std::strerror(error); }

Status fail_and_remove(const std::string& tmp, int error) {
  ::unlink(tmp.c_str());  // best effort: the reason reported is the write's, not this one's
  return Status::error("cannot write '" + tmp + "': " + os_reason(error));
}

}  // namespace

Status write_file_via(const std::string& tmp, const std::string& path, const uint8_t* data, size_t size,
                      unsigned mode) {
  // Created with `mode` even when it is read-only: the mode applies to later opens, not this one.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) return Status::error("cannot write '" + tmp + "': " + os_reason(errno));
  // `done` only grows by what write() says it wrote, which is at most what was left: it never
  // passes `size`, so `data + done` stays inside the buffer.
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;  // 0 bytes for a non-empty write: no room
      ::close(fd);
      return fail_and_remove(tmp, error);
    }
    done += std::min(static_cast<size_t>(n), size - done);
  }
  // close() can be the first to report a full disk (NFS, some FUSE file systems).
  if (::close(fd) != 0 && errno != EINTR) return fail_and_remove(tmp, errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return Status::error("cannot rename '" + tmp + "' to '" + path + "': " + os_reason(error));
  }
  return {};
}

const std::string& process_tag() {
  static const std::string tag = [] {
    std::random_device random;
    char text[48];
    std::snprintf(text, sizeof text, "%ld.%08x%08x", static_cast<long>(::getpid()), random(), random());
    return std::string(text);
  }();
  return tag;
}

Status probe_writable_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error("cannot create '" + dir + "': " + ec.message());
  const std::string probe = dir + "/.probe." + process_tag();
  const std::vector<uint8_t> block(k_probe_bytes, 0);
  const std::string target = probe + ".done";
  if (Status s = write_file_via(probe, target, block.data(), block.size()); !s.ok()) return s;
  if (::unlink(target.c_str()) != 0) return Status::error("cannot remove '" + target + "': " + os_reason(errno));
  return {};
}

}  // namespace farm
