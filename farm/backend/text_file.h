// A renderer's log or output file read whole, for the messages that quote it ("" if it cannot be
// read: the caller says what is missing).
#pragma once

#include <fstream>
#include <iterator>
#include <string>

namespace farm {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace farm
