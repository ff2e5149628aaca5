// Reading a TOML document with every problem reported as a SceneError at "file:line:column".
// TomlDocument owns the text and maps toml11 values back to positions in it; TableReader
// reads one table's keys with type and range checks and rejects keys it does not know.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <toml.hpp>

#include "scene/scene_desc.h"
#include "scene/toml_prescan.h"

namespace rt {

// Scene files larger than this are refused: toml11 needs about a second and a few hundred
// MB of memory per MB of dense TOML, and big geometry belongs in mesh files.
constexpr size_t k_max_scene_bytes = size_t{8} << 20;

// Allowed values of a number, able to say so in an error message.
struct NumRange {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;  // true: lo itself is excluded
  bool hi_open = false;

  static NumRange any() { return {}; }
  static NumRange closed(double lo, double hi) { return {lo, hi, false, false}; }
  static NumRange at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, false}; }
  static NumRange above(double lo) { return {lo, std::numeric_limits<double>::infinity(), true, false}; }
  bool contains(double v) const;
  // "in 1..64", "> 0", ">= 0 and < 180"; empty when unbounded.
  std::string describe() const;
};

// The parsed document plus what is needed to point into its text.
class TomlDocument {
 public:
  // Throws SceneError located at the syntax error (or at what the prescan refused) if
  // `text` is not acceptable TOML. `file` is the name used in messages.
  TomlDocument(std::string text, std::string file);

  const toml::value& root() const { return m_root; }
  const std::string& file() const { return m_file; }

  // Where a value starts (for tables from headers: the header). Never line 0: values with
  // no recorded position report the start of the file.
  SourceLoc loc(const toml::value& v) const;
  // Where `key` is written inside `table`, found by searching the value's line for the key;
  // falls back to the value's own position.
  SourceLoc key_loc(const toml::value& table, const std::string& key) const;

  [[noreturn]] void fail(const SourceLoc& at, const std::string& message) const;

 private:
  std::optional<size_t> offset_of(const toml::value& v) const;
  SourceLoc loc_at(size_t offset) const;
  void parse();
  [[noreturn]] void fail_syntax(const toml::exception& e) const;

  std::string m_file;
  std::string m_text;                 // as written (less any byte order mark)
  std::vector<size_t> m_line_starts;  // byte offset of each line's first character
  PreparedToml m_prepared;            // what toml11 parsed; its offsets map back to m_text
  toml::value m_root;
};

// One table of the document, read key by key.
class TableReader {
 public:
  // `what` names the table in messages, e.g. "[render]" or "[[object]]".
  TableReader(const TomlDocument& doc, const toml::value& table, std::string what);

  const TomlDocument& doc() const { return m_doc; }
  const std::string& what() const { return m_what; }
  SourceLoc loc() const { return m_doc.loc(m_table); }
  SourceLoc key_loc(const std::string& key) const { return m_doc.key_loc(m_table, key); }
  // Location of the key's value, or of the table when the key is absent.
  SourceLoc value_loc(const std::string& key) const;

  const toml::value* find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key) != nullptr; }
  // Keys present, in the order they appear in the file.
  std::vector<std::string> keys_in_file_order() const;
  // The first key (in file order) not in `allowed` is an error suggesting the nearest
  // allowed key, or listing them all when none is close.
  void check_keys(const std::vector<std::string>& allowed) const;

  int64_t get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const;
  float get_float(const std::string& key, float fallback, NumRange range = {}) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::optional<std::string> get_string(const std::string& key) const;
  // A string that must be present and non-empty; `purpose` completes "needs 'name' (...)".
  std::string require_string(const std::string& key, const std::string& purpose) const;
  Vec3 get_vec3(const std::string& key, Vec3 fallback) const;
  // A number (grey) or [r, g, b], each component within `range`.
  Color get_color(const std::string& key, Color fallback, NumRange range) const;

  // Conversions of one value, named `name` in messages; usable for array elements too.
  float to_float(const toml::value& v, const std::string& name, NumRange range = {}) const;
  Vec3 to_vec3(const toml::value& v, const std::string& name) const;
  Color to_color(const toml::value& v, const std::string& name, NumRange range) const;

  [[noreturn]] void fail(const std::string& message) const { m_doc.fail(loc(), message); }
  [[noreturn]] void fail_at(const std::string& key, const std::string& message) const {
    m_doc.fail(value_loc(key), message);
  }

 private:
  const TomlDocument& m_doc;
  const toml::value& m_table;
  std::string m_what;
};

// "a string", "an integer", "an array of 2 values", ... for "got ..." in messages.
std::string describe_value(const toml::value& v);
// A user-written name for a message: quoted, shortened, non-printable bytes replaced.
std::string quote_name(const std::string& s);
// "a, b, c" (or "none" when empty); long lists and names are shortened.
std::string join_names(const std::vector<std::string>& names);
// The candidate closest to `word` by edit distance when close enough to be a likely typo.
std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace rt
