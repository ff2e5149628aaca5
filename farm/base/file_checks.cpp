#include "base/file_checks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace farm {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

}  // namespace

std::string os_reason(int err) {
  char buffer[256];
  // The GNU strerror_r returns its message (maybe a static string), not an int.
  return ::strerror_r(err, buffer, sizeof buffer);
}

Status check_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::error("cannot open " + what + " " + quoted(path) + ": " + os_reason(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status::error(what + " " + quoted(path) + " is " + kind_of(st.st_mode) + ", not a regular file");
  }
  return {};
}

Status probe_writable(const std::string& path, const std::string& what) {
  if (Status own = check_writable_name(path, what); !own.ok()) return own;
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  // The output is written later under its own name (or replaced through a temporary file), so
  // the folder must take a new file: probe with one that cannot clash with anything.
  const std::string probe = (dir / (".farm-probe-" + std::to_string(::getpid()))).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::error("cannot write " + what + " " + quoted(path) + ": folder " + quoted(dir.string()) + ": " +
                         os_reason(errno));
  }
  // An empty file needs only an inode, which a full disk still has: write some bytes too, so a
  // full disk or an exhausted quota is found now and not after the render.
  static const char k_zeros[k_probe_bytes] = {};
  size_t done = 0;
  int err = 0;
  while (done < sizeof k_zeros && err == 0) {
    const ssize_t n = ::write(fd, k_zeros + done, sizeof k_zeros - done);
    if (n > 0) done += static_cast<size_t>(n);
    else if (n < 0 && errno != EINTR) err = errno;
    else if (n == 0) err = ENOSPC;
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  ::unlink(probe.c_str());
  if (err != 0) {
    return Status::error("cannot write " + what + " " + quoted(path) + ": folder " + quoted(dir.string()) + ": " +
                         os_reason(err));
  }
  return {};
}

Status check_writable_name(const std::string& path, const std::string& what) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Status::error("cannot write " + what + " " + quoted(path) + ": folder " + quoted(dir.string()) + ": " +
                         os_reason(errno));
  }
  if (!S_ISDIR(st.st_mode)) return Status::error("cannot write " + what + " " + quoted(path) + ": " + quoted(dir.string()) + " is not a folder");
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return Status::error("cannot write " + what + " " + quoted(path) + ": it is " + kind_of(st.st_mode));
    // O_NONBLOCK: harmless on a regular file, and no wait if it turned into a FIFO meanwhile.
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Status::error("cannot write " + what + " " + quoted(path) + ": " + os_reason(errno));
    ::close(fd);
  }
  return {};
}

}  // namespace farm
