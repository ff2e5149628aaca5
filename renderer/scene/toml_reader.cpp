// TableReader and the message helpers: typed getters that name the key, what was expected
// and what was found.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "scene/toml_reader.h"

#include "scene/render_settings.h"

namespace rt {

namespace {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << std::setprecision(7) << v;
  return os.str();
}

std::string int_range(int64_t lo, int64_t hi) {
  if (lo == std::numeric_limits<int64_t>::min() && hi == std::numeric_limits<int64_t>::max()) return "";
  if (hi == std::numeric_limits<int64_t>::max()) return ">= " + std::to_string(lo);
  return "in " + std::to_string(lo) + ".." + std::to_string(hi);
}

std::string with_space(const std::string& s) { return s.empty() ? s : " " + s; }

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), ignoring case.
size_t edit_distance(const std::string& a, const std::string& b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

}  // namespace

bool NumRange::contains(double v) const {
  if (lo_open ? !(v > lo) : !(v >= lo)) return false;
  if (hi_open ? !(v < hi) : !(v <= hi)) return false;
  return true;
}

std::string NumRange::describe() const {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi && !lo_open && !hi_open) return "in " + format_number(lo) + ".." + format_number(hi);
  std::string out;
  if (has_lo) out = (lo_open ? "> " : ">= ") + format_number(lo);
  if (has_hi) out += (out.empty() ? "" : " and ") + std::string(hi_open ? "< " : "<= ") + format_number(hi);
  return out;
}

std::string describe_value(const toml::value& v) {
  switch (v.type()) {
    case toml::value_t::boolean: return v.as_boolean() ? "true" : "false";
    case toml::value_t::integer: return std::to_string(v.as_integer());
    case toml::value_t::floating: return format_number(v.as_floating());
    case toml::value_t::string: return "a string";
    case toml::value_t::array: {
      size_t n = v.as_array().size();
      if (n == 0) return "an empty array";
      return n == 1 ? "an array of 1 value" : "an array of " + std::to_string(n) + " values";
    }
    case toml::value_t::table: return "a table";
    case toml::value_t::empty: return "nothing";
    default: return "a date/time";
  }
}

std::string quote_name(const std::string& s) {
  constexpr size_t k_max_shown = 60;  // names in messages, not pages of garbage
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < k_max_shown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
  }
  if (s.size() > k_max_shown) out += "...";
  return out + "'";
}

std::string int_limit_problem(const std::string& key, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return "";
  return quote_name(key) + " must be an integer" + with_space(int_range(lo, hi)) + ", got " + std::to_string(value);
}

std::string join_names(const std::vector<std::string>& names) {
  constexpr size_t k_max_listed = 30;  // a message, not an inventory
  constexpr size_t k_max_length = 60;
  if (names.empty()) return "none";
  std::string out;
  for (size_t i = 0; i < names.size() && i < k_max_listed; ++i) {
    const std::string& n = names[i];
    out += (i == 0 ? "" : ", ") + (n.size() > k_max_length ? n.substr(0, k_max_length) + "..." : n);
  }
  if (names.size() > k_max_listed) out += ", ... (" + std::to_string(names.size() - k_max_listed) + " more)";
  return out;
}

std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty() || word.size() > 64) return std::nullopt;
  // One typo per three letters or so, at most three: "widht" -> "width", not "x" -> "up".
  const size_t allowed = std::min<size_t>(3, word.size() / 3 + 1);
  std::optional<std::string> best;
  size_t best_distance = allowed + 1;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

TableReader::TableReader(const TomlDocument& doc, const toml::value& table, std::string what)
    : m_doc(doc), m_table(table), m_what(std::move(what)) {
  if (!m_table.is_table()) m_doc.fail(m_doc.loc(m_table), m_what + " must be a table, got " + describe_value(m_table));
}

SourceLoc TableReader::value_loc(const std::string& key) const {
  const toml::value* v = find(key);
  return v ? m_doc.loc(*v) : loc();
}

const toml::value* TableReader::find(const std::string& key) const {
  const auto& t = m_table.as_table();
  auto it = t.find(key);
  return it == t.end() ? nullptr : &it->second;
}

std::vector<std::string> TableReader::keys_in_file_order() const {
  std::vector<std::pair<SourceLoc, std::string>> keyed;
  for (const auto& kv : m_table.as_table()) keyed.emplace_back(m_doc.loc(kv.second), kv.first);
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first.line != b.first.line) return a.first.line < b.first.line;
    if (a.first.column != b.first.column) return a.first.column < b.first.column;
    return a.second < b.second;
  });
  std::vector<std::string> keys;
  for (auto& k : keyed) keys.push_back(std::move(k.second));
  return keys;
}

void TableReader::check_keys(const std::vector<std::string>& allowed) const {
  for (const std::string& key : keys_in_file_order()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string message = "unknown key " + quote_name(key) + " in " + m_what;
    if (auto near = nearest_name(key, allowed))
      message += "; did you mean '" + *near + "'?";
    else
      message += "; valid keys: " + join_names(allowed);
    m_doc.fail(key_loc(key), message);
  }
}

int64_t TableReader::get_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) const {
  const toml::value* v = find(key);
  if (!v) return fallback;
  if (!v->is_integer())
    m_doc.fail(m_doc.loc(*v), quote_name(key) + " must be an integer" + with_space(int_range(lo, hi)) + ", got " +
                                  describe_value(*v));
  if (std::string problem = int_limit_problem(key, v->as_integer(), lo, hi); !problem.empty())
    m_doc.fail(m_doc.loc(*v), problem);
  return v->as_integer();
}

float TableReader::get_float(const std::string& key, float fallback, NumRange range) const {
  const toml::value* v = find(key);
  return v ? to_float(*v, quote_name(key), range) : fallback;
}

bool TableReader::get_bool(const std::string& key, bool fallback) const {
  const toml::value* v = find(key);
  if (!v) return fallback;
  if (!v->is_boolean()) m_doc.fail(m_doc.loc(*v), quote_name(key) + " must be true or false, got " + describe_value(*v));
  return v->as_boolean();
}

std::optional<std::string> TableReader::get_string(const std::string& key) const {
  const toml::value* v = find(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) m_doc.fail(m_doc.loc(*v), quote_name(key) + " must be a string, got " + describe_value(*v));
  return v->as_string().str;
}

std::string TableReader::require_string(const std::string& key, const std::string& purpose) const {
  std::optional<std::string> s = get_string(key);
  if (!s) fail(m_what + " needs " + quote_name(key) + " (" + purpose + ")");
  if (s->empty()) fail_at(key, quote_name(key) + " must not be empty");
  return *s;
}

Vec3 TableReader::get_vec3(const std::string& key, Vec3 fallback) const {
  const toml::value* v = find(key);
  return v ? to_vec3(*v, quote_name(key)) : fallback;
}

Color TableReader::get_color(const std::string& key, Color fallback, NumRange range) const {
  const toml::value* v = find(key);
  return v ? to_color(*v, quote_name(key), range) : fallback;
}

float TableReader::to_float(const toml::value& v, const std::string& name, NumRange range) const {
  double d = 0;
  if (v.is_integer())
    d = static_cast<double>(v.as_integer());
  else if (v.is_floating())
    d = v.as_floating();
  else
    m_doc.fail(m_doc.loc(v), name + " must be a number" + with_space(range.describe()) + ", got " + describe_value(v));
  // TOML allows nan and inf literals; no scene quantity may be either.
  if (!std::isfinite(d)) m_doc.fail(m_doc.loc(v), name + " must be a finite number, got " + format_number(d));
  if (!std::isfinite(static_cast<float>(d)))
    m_doc.fail(m_doc.loc(v), name + " is too large for a 32-bit float, got " + format_number(d));
  if (!range.contains(d))
    m_doc.fail(m_doc.loc(v), name + " must be a number " + range.describe() + ", got " + format_number(d));
  return static_cast<float>(d);
}

Vec3 TableReader::to_vec3(const toml::value& v, const std::string& name) const {
  const std::string expected = name + ": expected [x, y, z] (3 numbers), got ";
  if (!v.is_array() || v.as_array().size() != 3) m_doc.fail(m_doc.loc(v), expected + describe_value(v));
  Vec3 out;
  for (int i = 0; i < 3; ++i) {
    const toml::value& e = v.as_array()[static_cast<size_t>(i)];
    if (!e.is_integer() && !e.is_floating())
      m_doc.fail(m_doc.loc(e), expected + describe_value(e) + " as element " + std::to_string(i + 1));
    out[i] = to_float(e, name + " element " + std::to_string(i + 1));
  }
  return out;
}

Color TableReader::to_color(const toml::value& v, const std::string& name, NumRange range) const {
  if (v.is_integer() || v.is_floating()) return Color(to_float(v, name, range));
  if (!v.is_array() || v.as_array().size() != 3)
    m_doc.fail(m_doc.loc(v), name + ": expected a colour (a number or [r, g, b]), got " + describe_value(v));
  Color out;
  for (int i = 0; i < 3; ++i)
    out[i] = to_float(v.as_array()[static_cast<size_t>(i)], name + " component " + std::to_string(i + 1), range);
  return out;
}

}  // namespace rt
