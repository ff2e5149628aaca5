// The farm's one JSON writer: the few pieces every statistics file is built from (no JSON
// library among the dependencies). Every string goes through json_string, every object member
// through json_field, so escaping is done in one place.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace farm {

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_string(const std::string& s);
// A number with a fixed number of decimals ("%.*f").
std::string fixed(double v, int decimals = 6);

// One object member, `"key": value`, with the value written as JSON.
std::string json_field(const std::string& key, const std::string& value);
inline std::string json_field(const std::string& key, const char* value) { return json_field(key, std::string(value)); }
std::string json_field(const std::string& key, bool value);
template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>>>
std::string json_field(const std::string& key, Int value) {
  return json_string(key) + ": " + std::to_string(value);
}
// A member whose value is already JSON (an array or object built with these functions).
std::string json_raw_field(const std::string& key, const std::string& json);

}  // namespace farm
