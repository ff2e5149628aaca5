// One word for a remote shell (the command ssh runs there), for the worker's and the relay's
// command lines: the host file's paths and names are already plain, quoting keeps them so
// whatever they hold.
#pragma once

#include <string>

namespace farm {

inline std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace farm
