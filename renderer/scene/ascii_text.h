// Small text helpers the scene readers share (file names and keywords are ASCII to them).
#pragma once

#include <cctype>
#include <string>

namespace rt {

// `s` with A-Z made a-z (bytes outside ASCII are kept).
inline std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace rt
