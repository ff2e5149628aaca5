// Range checks for numeric options with messages a person can read. CLI11's own Range prints
// its bounds with std::to_string ("0.000000 to 179769313486231570814527...").
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "transport/endpoint_check.h"

namespace farm {

namespace detail {
template <typename T>
std::string show(T value) {
  std::ostringstream out;
  out << value;  // 0.01, 1e+06, 4096: the shortest form that says it
  return out.str();
}

// Reads `text` as a T, or says why not. Whole numbers are plain decimals: CLI11 reads them with
// strtoull(base 0), so "-1" became 2^64-1 for --seed, 2^64 became 2^64-1 without a word, and
// "010" was 8. `text` is rewritten to the canonical decimal, which CLI11 then reads as meant.
template <typename T>
std::string parse_number(std::string& text, T& value) {
  if constexpr (std::is_integral_v<T>) {
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if (first != last && *first == '+') ++first;
    const auto [end, error] = std::from_chars(first, last, value, 10);
    if (first == last || end != last || (error != std::errc() && error != std::errc::result_out_of_range)) {
      return "'" + text + "' is not a whole number";
    }
    if (error == std::errc::result_out_of_range)
      return text + " is out of range (allowed: " + show(std::numeric_limits<T>::min()) + " to " +
             show(std::numeric_limits<T>::max()) + ")";
    text = std::to_string(value);
    return {};
  } else {
    if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
    return {};
  }
}
}  // namespace detail

// Use with ->transform(), not ->check(): CLI11 hands check() a copy, and the canonical decimal
// must reach the option.
// The value must lie in [min, max]; NaN is refused too. CLI11 prefixes the option's name:
// "--spp: 0 is out of range (allowed: 1 to 65536)".
template <typename T>
CLI::Validator in_range(T min, T max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        T value{};
        if (std::string why = detail::parse_number(text, value); !why.empty()) return why;
        if (!(value >= min && value <= max)) {
          return text + " is out of range (allowed: " + detail::show(min) + " to " + detail::show(max) + ")";
        }
        return {};
      },
      detail::show(min) + " to " + detail::show(max));
}

// The value must be at least `min` (no upper bound worth naming).
template <typename T>
CLI::Validator at_least(T min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        T value{};
        if (std::string why = detail::parse_number(text, value); !why.empty()) return why;
        if (!(value >= min)) return text + " is too small (at least " + detail::show(min) + ")";
        return {};
      },
      "at least " + detail::show(min));
}

// A ZeroMQ endpoint (transport/endpoint_check.h): "--bind: 'tcp://127.0.0.1:99999': port ...".
inline CLI::Validator endpoint_for(EndpointUse use) {
  return CLI::Validator([use](std::string& text) { return endpoint_problem(text, use); }, "ENDPOINT");
}

}  // namespace farm
