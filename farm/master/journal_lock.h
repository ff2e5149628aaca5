// One writer per journal: two masters started with the same -o (and --resume) would otherwise
// append to one file and each resume the other's blocks. The lock is a kernel record lock
// (fcntl F_SETLK) on JOURNAL.lock, so it goes with the process that holds it, however that
// process ends (kill -9 included): no stale lock to clear by hand.
#pragma once

#include <string>

namespace farm {

class JournalLock {
 public:
  // Takes the lock of `journal_path` (creating JOURNAL.lock), or throws JournalError: held by
  // another process ("... is in use by another farm process (pid N)") or the file cannot be
  // created (path and the OS's reason).
  explicit JournalLock(const std::string& journal_path);
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;
  // Removes the lock file, then releases the lock (in that order: whoever opens the file next
  // either waits on our lock or finds it gone and makes a new one; see the .cpp).
  ~JournalLock();

  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  int m_fd = -1;
};

}  // namespace farm
