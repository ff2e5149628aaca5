#include "scene/toml_prescan.h"

#include <algorithm>

namespace rt {

size_t PreparedToml::original_offset(size_t prepared_offset) const {
  auto before = std::lower_bound(inserted.begin(), inserted.end(), prepared_offset) - inserted.begin();
  return prepared_offset - static_cast<size_t>(before);
}

namespace {

// A light TOML lexer: it knows strings, comments, brackets, keys and commas, which is all
// the guards need. It copies the text, adding newlines after commas of long arrays.
class Prescan {
 public:
  explicit Prescan(const std::string& text) : m_in(text) { m_out.text.reserve(text.size() + text.size() / 32); }

  PreparedToml run() {
    while (m_pos < m_in.size()) step();
    check_line(m_in.size());
    return std::move(m_out);
  }

 private:
  void step() {
    const size_t start = m_pos;
    const char c = m_in[m_pos];
    if (c == '#') {
      while (m_pos < m_in.size() && m_in[m_pos] != '\n') ++m_pos;
      copy(start);
      return;
    }
    if (c == '"' || c == '\'') {
      skip_string(c);
      copy(start);
      m_line_blank = false;
      return;
    }
    ++m_pos;
    switch (c) {
      case '\n':
        check_line(start);
        copy(start);
        m_line_start = m_out.text.size();
        m_in_line_start = m_pos;
        if (m_stack.empty()) start_key();
        m_line_blank = true;
        return;
      case '[': {
        // A table header opens a line outside any value; its second '[' belongs to it too.
        bool header = m_stack.empty() ? (m_key && m_line_blank)
                                      : (m_stack.back() == 'h' && m_out.text.back() == '[' && m_stack.size() == 1);
        m_stack.push_back(header ? 'h' : '[');
        if (!header) m_key = false;
        check_depth(start);
        break;
      }
      case '{':
        m_stack.push_back('{');
        start_key();
        check_depth(start);
        break;
      case ']':
      case '}':
        if (!m_stack.empty()) m_stack.pop_back();
        break;
      case '=':
        m_key = false;
        m_key_dots = 0;
        break;
      case '.':
        if (m_key) {
          ++m_key_dots;
          check_depth(start);
        }
        break;
      case ',':
        if (!m_stack.empty() && m_stack.back() == '{') start_key();
        break;
      default:
        break;
    }
    if (c != ' ' && c != '\t' && c != '\r') m_line_blank = false;
    copy(start);
    if (c == ',' && !m_stack.empty() && m_stack.back() == '[' &&
        m_out.text.size() - m_line_start > k_toml_split_column) {
      // Arrays may break lines after any comma; this keeps toml11's per-value work short.
      m_out.text.push_back('\n');
      m_out.inserted.push_back(m_out.text.size() - 1);
      m_line_start = m_out.text.size();
    }
  }

  void skip_string(char quote) {
    const std::string triple(3, quote);
    const bool multi = m_in.compare(m_pos, 3, triple) == 0;
    m_pos += multi ? 3 : 1;
    while (m_pos < m_in.size()) {
      char c = m_in[m_pos];
      if (quote == '"' && c == '\\') {
        m_pos = std::min(m_pos + 2, m_in.size());
      } else if (!multi && c == '\n') {
        return;  // unterminated: toml11 reports it
      } else if (multi ? m_in.compare(m_pos, 3, triple) == 0 : c == quote) {
        m_pos += multi ? 3 : 1;
        return;
      } else {
        if (c == '\n') {
          check_line(m_pos);
          m_line_start = m_out.text.size() + (m_pos - m_copied) + 1;
          m_in_line_start = m_pos + 1;
        }
        ++m_pos;
      }
    }
  }

  void start_key() {
    m_key = true;
    m_key_dots = 0;
  }

  void copy(size_t start) {
    m_out.text.append(m_in, start, m_pos - start);
    m_copied = m_pos;
  }

  void check_depth(size_t at) const {
    if (static_cast<int>(m_stack.size()) + m_key_dots > k_max_toml_nesting)
      throw PrescanError(at, "arrays, inline tables and dotted keys nested more than " +
                                 std::to_string(k_max_toml_nesting) + " deep");
  }

  // `end` is the original offset of the newline ending the current line.
  void check_line(size_t end) const {
    size_t pending = end - m_copied;  // original bytes of this line not yet copied
    if (m_out.text.size() + pending - m_line_start > k_max_toml_line_bytes)
      throw PrescanError(m_in_line_start, "line is longer than " + std::to_string(k_max_toml_line_bytes) +
                                  " bytes; break it up (arrays may span several lines)");
  }

  const std::string& m_in;
  size_t m_pos = 0;
  size_t m_copied = 0;       // original bytes copied to m_out so far
  size_t m_line_start = 0;   // offset in m_out.text where the current line starts
  size_t m_in_line_start = 0;  // the same in the original text
  std::vector<char> m_stack; // open '[' (array), 'h' (table header) and '{'
  bool m_key = true;         // reading a key, where dots nest tables
  bool m_line_blank = true;  // only whitespace so far on this line
  int m_key_dots = 0;
  PreparedToml m_out;
};

}  // namespace

PreparedToml prepare_for_toml11(const std::string& text) { return Prescan(text).run(); }

}  // namespace rt
