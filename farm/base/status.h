// How the farm reports failure inside its code (docs/architecture.md "Errors"):
//  - bad input from outside (files, options, messages) the caller can act on: a Status (or an
//    std::optional result) carrying a message that names what is wrong and where;
//  - bad configuration files (TOML scenes and clusters): rt::SceneError with its SourceLoc,
//    thrown by the readers and caught once at the command;
//  - I/O failures deep in a call chain: exceptions, caught at the layer that can report them;
//  - broken invariants (a bug, never bad input): FARM_CHECK, which names file and line.
// Process exit codes exist only in cli/.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace farm {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status error(std::string message) {
    Status s;
    s.m_error = std::move(message);
    return s;
  }
  bool ok() const { return !m_error.has_value(); }
  // The problem, for the user ("" when ok).
  const std::string& message() const {
    static const std::string none;
    return m_error ? *m_error : none;
  }

 private:
  std::optional<std::string> m_error;
};

// A broken invariant: a bug in the farm, not bad input.
struct InvariantError : std::logic_error {
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_check(const char* condition, const char* file, int line);

}  // namespace farm

// Checks an invariant in every build type; throws InvariantError naming the condition, file and
// line. Never use it for input from outside: that gets a Status with a clear message.
#define FARM_CHECK(condition) \
  ((condition) ? static_cast<void>(0) : ::farm::fail_check(#condition, __FILE__, __LINE__))
