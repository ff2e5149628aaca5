#include "base/json_text.h"

#include <cstdio>

namespace farm {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string json_field(const std::string& key, const std::string& value) { return json_string(key) + ": " + json_string(value); }

std::string json_field(const std::string& key, bool value) { return json_string(key) + ": " + (value ? "true" : "false"); }

std::string json_raw_field(const std::string& key, const std::string& json) { return json_string(key) + ": " + json; }

}  // namespace farm
