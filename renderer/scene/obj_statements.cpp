// The parsing half of obj_references.h: texture statements of MTL text and mtllib statements of
// OBJ text. No file system here, so the fuzzer can reach every branch.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "scene/obj_references.h"

namespace rt {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Real MTLs put comments after values ("Kd 0.6 0.6 0.6 # grey"); a '#' inside a name
// ("tex#2.png") is kept, since only one after whitespace (or at the start) begins a comment.
std::string_view without_comment(std::string_view line) {
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_space(line[i - 1]))) return line.substr(0, i);
  }
  return line;
}

struct Token {
  std::string_view text;
  size_t at = 0;  // byte offset in the line
};

std::vector<Token> tokens_of(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) out.push_back({s.substr(start, i - start), start});
  }
  return out;
}

int clamp_to_int(int64_t n) { return static_cast<int>(std::min<int64_t>(n, INT_MAX)); }

// Splits text fed in pieces into lines at "\n", "\r\n" or a lone "\r", numbered from 1. A line
// longer than k_max_statement_line_bytes is skipped whole and never buffered past the limit, so
// a 2 GiB file without line breaks costs 64 KiB of memory.
class LineSplitter {
 public:
  template <class OnLine>
  void feed(std::string_view bytes, OnLine& on_line) {
    size_t at = 0;
    while (at < bytes.size()) {
      bool crlf = m_after_cr && bytes[at] == '\n';
      m_after_cr = false;
      if (crlf) {
        ++at;
        continue;
      }
      size_t end = bytes.find_first_of("\r\n", at);
      append(bytes.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
      if (end == std::string_view::npos) return;
      emit(on_line);
      m_after_cr = bytes[end] == '\r';
      at = end + 1;
    }
  }

  // The last line, if the text does not end with a line break.
  template <class OnLine>
  void finish(OnLine& on_line) {
    if (!m_line.empty() || m_too_long) emit(on_line);
  }

 private:
  void append(std::string_view piece) {
    if (m_too_long) return;
    if (m_line.size() + piece.size() > k_max_statement_line_bytes) {
      m_too_long = true;
      m_line.clear();
      return;
    }
    m_line.append(piece);
  }

  template <class OnLine>
  void emit(OnLine& on_line) {
    ++m_number;
    std::string_view line = m_line;
    if (m_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 BOM
    if (!m_too_long) on_line(line, clamp_to_int(m_number));
    m_line.clear();
    m_too_long = false;
  }

  std::string m_line;
  int64_t m_number = 0;
  bool m_too_long = false;
  bool m_after_cr = false;
};

// ---------------------------------------------------------------------------------------------
// MTL texture statements

// Canonical spellings; files in the wild vary the case ("Map_Kd", "map_bump", "map_Bump").
// "map_aat on" (anti-aliasing) is deliberately absent: it names no file.
constexpr std::array<std::string_view, 20> k_texture_keywords = {
    "map_Ka", "map_Kd", "map_Ks", "map_Ke", "map_emissive", "map_Ns",   "map_d", "map_Tr", "map_bump", "bump",
    "map_Kn", "norm",   "map_Pr", "map_Pm", "map_Ps",       "map_disp", "disp",  "decal",  "refl",     "map_refl"};

std::optional<std::string_view> canonical_texture_keyword(std::string_view word) {
  for (std::string_view k : k_texture_keywords) {
    if (equals_ignoring_case(word, k)) return k;
  }
  return std::nullopt;
}

enum class ArgKind { on_off, number, channel, projection };

// Each option's arguments: `required` ones of its kind, then up to `optional` more numbers.
struct TextureOption {
  std::string_view name;
  ArgKind kind;
  int required;
  int optional;
};

constexpr std::array<TextureOption, 13> k_texture_options = {{
    {"-blendu", ArgKind::on_off, 1, 0},
    {"-blendv", ArgKind::on_off, 1, 0},
    {"-cc", ArgKind::on_off, 1, 0},
    {"-clamp", ArgKind::on_off, 1, 0},
    {"-bm", ArgKind::number, 1, 0},
    {"-boost", ArgKind::number, 1, 0},
    {"-texres", ArgKind::number, 1, 0},
    {"-mm", ArgKind::number, 1, 1},  // base [gain]
    {"-o", ArgKind::number, 1, 2},   // u [v [w]]
    {"-s", ArgKind::number, 1, 2},
    {"-t", ArgKind::number, 1, 2},
    {"-imfchan", ArgKind::channel, 1, 0},
    {"-type", ArgKind::projection, 1, 0},
}};

const TextureOption* find_option(std::string_view word) {
  for (const TextureOption& o : k_texture_options) {
    if (equals_ignoring_case(word, o.name)) return &o;
  }
  return nullptr;
}

// "2", "-0.5", "+1e3", ".5"; not "inf", "nan" or "2.png" (a file name).
bool is_number(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty() || !(std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '-' || s.front() == '.')) {
    return false;
  }
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return end == s.data() + s.size() && (ec == std::errc() || ec == std::errc::result_out_of_range);
}

bool is_one_of(std::string_view word, std::initializer_list<std::string_view> values) {
  return std::any_of(values.begin(), values.end(), [&](std::string_view v) { return equals_ignoring_case(word, v); });
}

bool accepts(ArgKind kind, std::string_view word) {
  switch (kind) {
    case ArgKind::on_off: return is_one_of(word, {"on", "off"});
    case ArgKind::number: return is_number(word);
    case ArgKind::channel: return is_one_of(word, {"r", "g", "b", "m", "l", "z"});
    case ArgKind::projection:
      return is_one_of(word, {"sphere", "cube_top", "cube_bottom", "cube_front", "cube_back", "cube_left", "cube_right"});
  }
  return false;
}

// The index of the first token after the options that start at `i`. An argument of the wrong
// kind is not consumed (so "-clamp tex.png" keeps its file name), and optional numbers never
// take the last token (so "-s 2 2 7" still names the file "7").
size_t skip_options(const std::vector<Token>& tokens, size_t i) {
  while (i < tokens.size()) {
    const TextureOption* option = find_option(tokens[i].text);
    if (!option) break;
    ++i;
    for (int k = 0; k < option->required && i < tokens.size() && accepts(option->kind, tokens[i].text); ++k) ++i;
    for (int k = 0; k < option->optional && i + 1 < tokens.size() && is_number(tokens[i].text); ++k) ++i;
  }
  return i;
}

std::optional<MtlTextureStatement> parse_texture_line(std::string_view line) {
  std::string_view content = without_comment(line);
  std::vector<Token> tokens = tokens_of(content);
  if (tokens.empty()) return std::nullopt;
  std::optional<std::string_view> keyword = canonical_texture_keyword(tokens[0].text);
  if (!keyword) return std::nullopt;
  size_t first = skip_options(tokens, 1);
  if (first >= tokens.size()) return std::nullopt;
  MtlTextureStatement s;
  s.keyword = std::string(*keyword);
  s.file_name = std::string(trim(content.substr(tokens[first].at)));
  s.column = clamp_to_int(static_cast<int64_t>(tokens[first].at) + 1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// OBJ mtllib statements

constexpr size_t k_obj_chunk_bytes = size_t{64} << 10;

WrittenName written(const Token& t) { return {std::string(t.text), clamp_to_int(static_cast<int64_t>(t.at) + 1)}; }

std::optional<ObjMtllibStatement> parse_mtllib_line(std::string_view line) {
  // Cheap rejection first: nearly every OBJ line is a vertex or a face.
  size_t start = 0;
  while (start < line.size() && is_space(line[start])) ++start;
  if (line.size() - start < 6 || !equals_ignoring_case(line.substr(start, 6), "mtllib")) return std::nullopt;
  std::string_view content = without_comment(line);
  std::vector<Token> tokens = tokens_of(content);
  if (tokens.size() < 2 || !equals_ignoring_case(tokens[0].text, "mtllib")) return std::nullopt;
  ObjMtllibStatement s;
  s.whole.text = std::string(trim(content.substr(tokens[1].at)));
  s.whole.column = clamp_to_int(static_cast<int64_t>(tokens[1].at) + 1);
  for (size_t i = 1; i < tokens.size(); ++i) s.words.push_back(written(tokens[i]));
  return s;
}

[[noreturn]] void too_many(const char* what) {
  throw std::runtime_error("more than " + std::to_string(k_max_file_statements) + " " + what + " statements");
}

}  // namespace

std::vector<MtlTextureStatement> parse_mtl_texture_statements(std::string_view mtl_text) {
  std::vector<MtlTextureStatement> out;
  auto on_line = [&out](std::string_view line, int number) {
    std::optional<MtlTextureStatement> s = parse_texture_line(line);
    if (!s) return;
    if (out.size() >= k_max_file_statements) too_many("texture");
    s->line = number;
    out.push_back(std::move(*s));
  };
  LineSplitter lines;
  lines.feed(mtl_text, on_line);
  lines.finish(on_line);
  return out;
}

std::vector<ObjMtllibStatement> scan_obj_mtllib_statements(std::istream& obj) {
  std::vector<ObjMtllibStatement> out;
  auto on_line = [&out](std::string_view line, int number) {
    std::optional<ObjMtllibStatement> s = parse_mtllib_line(line);
    if (!s) return;
    if (out.size() >= k_max_file_statements) too_many("mtllib");
    s->line = number;
    out.push_back(std::move(*s));
  };
  LineSplitter lines;
  std::unique_ptr<char[]> chunk(new char[k_obj_chunk_bytes]);  // not zeroed: filled by read
  while (obj) {
    obj.read(chunk.get(), static_cast<std::streamsize>(k_obj_chunk_bytes));
    lines.feed(std::string_view(chunk.get(), static_cast<size_t>(obj.gcount())), on_line);
  }
  lines.finish(on_line);
  return out;
}

}  // namespace rt
