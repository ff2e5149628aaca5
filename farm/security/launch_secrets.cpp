#include "security/launch_secrets.h"

#include <unistd.h>

#include <cerrno>

#include "security/curve_keys.h"

namespace farm::security {

std::string format_launch_secrets(const CurveClient& k) {
  return "farm-launch-secrets 1\nworker-public-key " + k.public_key + "\nworker-secret-key " + k.secret_key +
         "\nmaster-public-key " + k.server_key + "\nend\n";
}

namespace {

// One line, byte by byte: reading ahead would swallow what follows on the lifeline.
bool read_line(int fd, std::string& line) {
  line.clear();
  for (;;) {
    char c;
    const ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    if (line.size() >= 200) throw KeyFileError("launch secrets on standard input: line too long");
    line += c;
  }
}

}  // namespace

CurveClient read_launch_secrets(int fd) {
  CurveClient k;
  std::string line;
  int number = 0;
  auto next = [&]() -> const std::string& {
    ++number;
    if (!read_line(fd, line))
      throw KeyFileError("launch secrets on standard input ended at line " + std::to_string(number) +
                         " (expected 5 lines from the command that launched this worker)");
    return line;
  };
  auto key = [&](const std::string& name, std::string& out) {
    const std::string& l = next();
    const std::string prefix = name + " ";
    if (l.rfind(prefix, 0) != 0 || !is_z85_key(l.substr(prefix.size())))
      throw KeyFileError("launch secrets on standard input, line " + std::to_string(number) + ": expected '" + name +
                         " <40 Z85 characters>'");
    out = l.substr(prefix.size());
  };
  if (next() != "farm-launch-secrets 1")
    throw KeyFileError("standard input does not start with 'farm-launch-secrets 1' (was this worker launched by a "
                       "farm master over ssh or srun?)");
  key("worker-public-key", k.public_key);
  key("worker-secret-key", k.secret_key);
  key("master-public-key", k.server_key);
  if (next() != "end") throw KeyFileError("launch secrets on standard input, line 5: expected 'end'");
  return k;
}

}  // namespace farm::security
