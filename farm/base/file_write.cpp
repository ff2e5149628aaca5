#include "base/file_write.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/file_checks.h"

namespace farm {

Status write_file_replacing(const std::string& path, std::string_view content, const std::string& what) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    return Status::error("cannot write " + what + " '" + path + "': " + os_reason(err));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::error("cannot write " + what + " '" + path + "': " + os_reason(errno));
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;  // a 0-byte write of a non-empty buffer: no room
      ::close(fd);
      return fail(err);
    }
    done += static_cast<size_t>(n);
  }
  // close() reports errors of delayed writes (NFS, quotas); they count as failures too.
  if (::close(fd) != 0) return fail(errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  return {};
}

}  // namespace farm
