#include "master/output_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace farm {

void probe_writable(const std::string& path, const std::string& what) {
  const std::filesystem::path p(path);
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  // Named like the image writer's own temporary file (renderer/image/image_io.cpp), which is
  // what the folder must accept at the end; the pid keeps two runs from meeting.
  const std::string probe = (std::filesystem::path(dir) / (".probe." + std::to_string(::getpid()) + "." +
                                                           p.filename().string())).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {  // left by a killed run with our pid: ours to replace
    ::unlink(probe.c_str());
    fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  }
  if (fd < 0) {
    throw std::invalid_argument("cannot write the " + what + " '" + path + "': cannot create a file in '" + dir +
                                "': " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  // An existing file is kept until the job replaces it; it must at least open for writing.
  int existing = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (existing < 0 && errno != ENOENT) {
    throw std::invalid_argument("cannot write the " + what + " '" + path + "': cannot open it for writing: " +
                                std::strerror(errno));
  }
  if (existing >= 0) ::close(existing);
}

}  // namespace farm
