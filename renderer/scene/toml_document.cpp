// TomlDocument: parsing with located syntax errors, and value -> file:line:column.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "scene/toml_reader.h"

namespace rt {

namespace {

// toml11 formats its errors as a headline plus underlined source excerpts:
//   [error] toml::parse_array: missing array separator `,` after a value
//    --> scene.toml
//      |
//    4 | c = 3
//      | ^--- should be `,`
// The last excerpt marks where parsing failed; this pulls out its position and comment.
struct TomlMessage {
  std::string summary;
  int line = 0;
  int column = 0;
};

bool all_of_chars(const std::string& s, size_t n, bool digits_allowed) {
  for (size_t i = 0; i < n; ++i)
    if (s[i] != ' ' && !(digits_allowed && s[i] >= '0' && s[i] <= '9')) return false;
  return true;
}

TomlMessage digest_toml_message(const std::string& what) {
  std::vector<std::string> lines;
  std::istringstream in(what);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  TomlMessage out;
  if (lines.empty()) return out;

  std::string head = lines[0];
  if (head.rfind("[error]", 0) == 0) head.erase(0, 7);
  head.erase(0, std::min(head.find_first_not_of(' '), head.size()));
  // Drop the internal function name ("toml::parse_array: ", "parse_ml_basic_string: ").
  size_t colon = head.find(": ");
  if (colon != std::string::npos &&
      std::all_of(head.begin(), head.begin() + static_cast<long>(colon),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }))
    head.erase(0, colon + 2);
  while (!head.empty() && (head.back() == '.' || head.back() == ' ')) head.pop_back();

  std::string comment;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string& src = lines[i];
    const std::string& mark = lines[i + 1];
    size_t bar = src.find('|');
    size_t mark_bar = mark.find('|');
    if (bar == std::string::npos || mark_bar == std::string::npos || bar != mark_bar) continue;
    if (!all_of_chars(src, bar, true) || !all_of_chars(mark, mark_bar, false)) continue;
    if (src.find_first_of("0123456789") >= bar) continue;
    size_t m = mark.find_first_not_of(' ', mark_bar + 1);
    if (m == std::string::npos || (mark[m] != '^' && mark[m] != '~')) continue;
    out.line = std::atoi(src.c_str());
    out.column = static_cast<int>(m - (mark_bar + 2)) + 1;
    size_t c = mark.find_first_not_of(mark[m] == '^' ? "^-" : "~", m);
    comment = c == std::string::npos ? "" : mark.substr(c);
    comment.erase(0, std::min(comment.find_first_not_of(' '), comment.size()));
    while (!comment.empty() && (comment.back() == '.' || comment.back() == ' ')) comment.pop_back();
    if (comment == "here") comment.clear();  // says nothing the location does not
  }
  out.summary = head;
  if (!comment.empty()) out.summary += " (" + comment + ")";
  return out;
}

// Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms,
// no surrogates, nothing above U+10FFFF), or npos. TOML files must be UTF-8, and toml11 must
// never see anything else: its error path for a bad sequence inside a literal string rewinds
// with an iterator of another buffer and reads out of bounds (found by fuzz_cluster).
size_t first_invalid_utf8(const std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    i += len;
  }
  return std::string::npos;
}

}  // namespace

TomlDocument::TomlDocument(std::string text, std::string file) : m_file(std::move(file)), m_text(std::move(text)) {
  // A UTF-8 byte order mark would shift toml11's columns on line 1; it carries no content.
  if (m_text.compare(0, 3, "\xEF\xBB\xBF") == 0) m_text.erase(0, 3);
  m_line_starts.push_back(0);
  for (size_t i = 0; i < m_text.size(); ++i)
    if (m_text[i] == '\n') m_line_starts.push_back(i + 1);
  if (m_text.size() > k_max_scene_bytes)
    fail({m_file, 1, 1}, "scene file is too large (" + std::to_string(m_text.size()) + " bytes; the limit is " +
                             std::to_string(k_max_scene_bytes >> 20) + " MiB): put big geometry in mesh files");
  if (size_t bad = first_invalid_utf8(m_text); bad != std::string::npos)
    fail(loc_at(bad), "the file is not valid UTF-8 here (TOML files must be UTF-8)");
  try {
    m_prepared = prepare_for_toml11(m_text);
  } catch (const PrescanError& e) {
    fail(loc_at(e.offset()), e.what());
  }
  parse();
}

void TomlDocument::parse() {
  try {
    std::istringstream in(m_prepared.text);
    // toml11 copies the name into every value's source region; messages use m_file anyway,
    // and a short name stays inside std::string's small buffer.
    m_root = toml::parse(in, "scene");
  } catch (const toml::exception& e) {
    fail_syntax(e);
  } catch (const std::exception& e) {
    // Not expected from toml11 for any input, but a scene error is the right report.
    fail({m_file, 1, 1}, std::string("TOML error: ") + e.what());
  }
  if (!m_root.is_table()) fail({m_file, 1, 1}, "TOML document is not a table");
}

void TomlDocument::fail_syntax(const toml::exception& e) const {
  TomlMessage m = digest_toml_message(e.what());
  int line = m.line > 0 ? m.line : static_cast<int>(e.location().line());
  int column = m.line > 0 ? m.column : static_cast<int>(e.location().column());
  // toml11 counted lines and columns in the prepared text: map them back to the user's.
  size_t offset = 0;
  int current = 1;
  const std::string& t = m_prepared.text;
  while (current < line && offset < t.size()) {
    size_t nl = t.find('\n', offset);
    if (nl == std::string::npos) break;
    offset = nl + 1;
    ++current;
  }
  offset = std::min(offset + static_cast<size_t>(std::max(column, 1) - 1), t.size());
  fail(loc_at(m_prepared.original_offset(offset)),
       "TOML syntax error: " + (m.summary.empty() ? std::string("cannot parse") : m.summary));
}

std::optional<size_t> TomlDocument::offset_of(const toml::value& v) const {
  // toml11 keeps each value's source range in a detail::region; the public location()
  // recounts lines from the start of the file on every call, which is quadratic.
  const auto* reg = dynamic_cast<const toml::detail::region*>(toml::detail::get_region(v));
  if (reg && reg->is_ok()) {
    auto off = std::distance(reg->begin(), reg->first());
    if (off >= 0) return std::min(m_prepared.original_offset(static_cast<size_t>(off)), m_text.size());
  }
  // Arrays of tables ([[object]]) carry no range of their own: use the first header.
  if (v.is_array() && !v.as_array().empty()) return offset_of(v.as_array().front());
  return std::nullopt;
}

SourceLoc TomlDocument::loc_at(size_t offset) const {
  auto it = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset);
  size_t line = static_cast<size_t>(it - m_line_starts.begin());  // 1-based
  size_t column = offset - m_line_starts[line - 1] + 1;
  return {m_file, static_cast<int>(line), static_cast<int>(column)};
}

SourceLoc TomlDocument::loc(const toml::value& v) const {
  if (auto off = offset_of(v)) return loc_at(*off);
  return {m_file, 1, 1};
}

SourceLoc TomlDocument::key_loc(const toml::value& table, const std::string& key) const {
  if (!table.is_table()) return loc(table);
  auto found = table.as_table().find(key);
  if (found == table.as_table().end()) return loc(table);
  auto off = offset_of(found->second);
  if (!off || key.empty()) return loc(found->second);

  // The key is written on the value's line: before it for `key = value`, inside the header
  // for `[key]` / `[[key]]`. Prefer the last whole-word match before the value.
  size_t line_begin = m_line_starts[static_cast<size_t>(loc_at(*off).line) - 1];
  size_t line_end = std::min(m_text.find('\n', line_begin), m_text.size());
  auto is_key_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; };
  std::optional<size_t> before, after;
  for (size_t p = m_text.find(key, line_begin); p != std::string::npos && p + key.size() <= line_end;
       p = m_text.find(key, p + 1)) {
    bool word_start = p == line_begin || !is_key_char(m_text[p - 1]);
    bool word_end = p + key.size() == m_text.size() || !is_key_char(m_text[p + key.size()]);
    if (!word_start || !word_end) continue;
    if (p < *off) before = p;
    else if (!after) after = p;
  }
  if (before) return loc_at(*before);
  if (after) return loc_at(*after);
  return loc_at(*off);
}

void TomlDocument::fail(const SourceLoc& at, const std::string& message) const {
  SourceLoc where = at;
  if (where.line <= 0) where = {m_file, 1, 1};
  throw SceneError(where.str() + ": " + message);
}

}  // namespace rt
