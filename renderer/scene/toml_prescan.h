// Guards around toml11 v3's parser, which (1) recurses once per level of nested arrays,
// inline tables and dotted keys, so deep input overflows the stack, and (2) rescans the whole
// source line for every value it reads, so long lines take quadratic time. The prescan refuses
// deep nesting and long lines, and breaks long arrays after their commas so no value sits on
// a long line; the added newlines are recorded to map positions back to the user's text.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace rt {

constexpr int k_max_toml_nesting = 64;          // brackets, braces and key dots together
constexpr size_t k_max_toml_line_bytes = 8192;  // after long arrays have been broken up
constexpr size_t k_toml_split_column = 100;     // arrays are broken only past this column

struct PreparedToml {
  std::string text;               // what toml11 parses
  std::vector<size_t> inserted;   // offsets in `text` of the added newlines, ascending
  // The offset in the original text of the character at `prepared_offset`.
  size_t original_offset(size_t prepared_offset) const;
};

// A problem found by the prescan, at a byte offset of the original text.
class PrescanError : public std::runtime_error {
 public:
  PrescanError(size_t offset, const std::string& message) : std::runtime_error(message), m_offset(offset) {}
  size_t offset() const { return m_offset; }

 private:
  size_t m_offset;
};

// Throws PrescanError for nesting deeper than k_max_toml_nesting or lines longer than
// k_max_toml_line_bytes. Malformed TOML passes through for toml11 to report.
PreparedToml prepare_for_toml11(const std::string& text);

}  // namespace rt
