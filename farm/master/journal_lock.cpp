#include "master/journal_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "master/journal_format.h"

namespace farm {

namespace {

// The lock file of the journal's real path: a symlink to a journal (or to its folder) must find
// the same lock, or a second writer gets in through another name (the second adversarial pass
// rewrote a live master's journal through `ln -s`). A hard link is another name for the same
// file that no path resolution finds: that case is not covered.
std::string lock_path_of(const std::string& journal_path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(journal_path, ec);
  return (ec ? journal_path : real.string()) + ".lock";
}

}  // namespace

JournalLock::JournalLock(const std::string& journal_path) : m_path(lock_path_of(journal_path)) {
  // A holder removes the file before it lets go, so a file we locked may already be unlinked:
  // then the lock guards nothing and we start over with the file now at the path.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(m_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw JournalError("cannot create the journal's lock file '" + m_path + "': " + std::strerror(errno));
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &lock) != 0) {
      const int error = errno;
      struct flock holder {};
      holder.l_type = F_WRLCK;
      holder.l_whence = SEEK_SET;
      const bool known = ::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
      ::close(fd);
      if (error != EACCES && error != EAGAIN) {
        throw JournalError("cannot lock '" + m_path + "': " + std::strerror(error));
      }
      if (!known) continue;  // released in between: try again
      // Not the OS failing: the user started two renders to one output (bad input).
      throw std::invalid_argument("the journal '" + journal_path + "' is in use by another farm process (pid " +
                                  std::to_string(holder.l_pid) +
                                  "): two renders to the same output would mix their "
                                  "blocks; wait for it to end, or give this one another -o or --journal");
    }
    struct stat held {}, now {};
    if (::fstat(fd, &held) == 0 && ::stat(m_path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      // Who holds it, for a person looking at the file (the refusal asks the kernel instead).
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
      m_fd = fd;
      return;
    }
    ::close(fd);
  }
  throw JournalError("cannot lock '" + m_path + "': it keeps being replaced");
}

JournalLock::~JournalLock() {
  if (m_fd < 0) return;
  ::unlink(m_path.c_str());
  ::close(m_fd);
}

}  // namespace farm
