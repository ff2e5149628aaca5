// Range checks for numeric options with messages a person can read. CLI11's own Range prints
// its bounds with std::to_string ("0.000000 to 179769313486231570814527...").
#pragma once

#include <CLI/CLI.hpp>

#include <limits>
#include <sstream>
#include <string>

#include "protocol/endpoint_check.h"

namespace farm {

namespace detail {
template <typename T>
std::string show(T value) {
  std::ostringstream out;
  out << value;  // 0.01, 1e+06, 4096: the shortest form that says it
  return out.str();
}
}  // namespace detail

// The value must lie in [min, max]; NaN is refused too. CLI11 prefixes the option's name:
// "--spp: 0 is out of range (allowed: 1 to 65536)".
template <typename T>
CLI::Validator in_range(T min, T max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
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
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!(value >= min)) return text + " is too small (at least " + detail::show(min) + ")";
        return {};
      },
      "at least " + detail::show(min));
}

// A ZeroMQ endpoint (protocol/endpoint_check.h): "--bind: 'tcp://127.0.0.1:99999': port ...".
inline CLI::Validator endpoint_for(EndpointUse use) {
  return CLI::Validator([use](std::string& text) { return endpoint_problem(text, use); }, "ENDPOINT");
}

}  // namespace farm
