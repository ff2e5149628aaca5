#include "backend/povray_scene.h"

#include <cctype>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "scene/asset_search.h"
#include "scene/scene_desc.h"

namespace farm {

namespace {

namespace fs = std::filesystem;

constexpr size_t k_max_pov_file_bytes = size_t{64} << 20;  // scene and include files
constexpr int k_max_include_depth = 64;

// Keywords whose next token, when a string literal, is a file POV-Ray reads.
const std::set<std::string> k_file_keywords = {"png", "jpeg", "tga",  "gif", "iff",  "ppm", "pgm",
                                               "sys", "hdr",  "exr",  "tiff", "bmp", "df3", "ttf"};

// Directives whose body runs only on a condition or when called; each is closed by #end.
const std::set<std::string> k_conditional_directives = {"#if",    "#ifdef", "#ifndef", "#switch",
                                                        "#while", "#for",   "#macro"};

struct Token {
  std::string text;
  bool is_string = false;
  int line = 0, column = 0;
};

// Identifiers (with a leading '#' for directives), string literals and single characters;
// comments skipped. Made as the scan reads them, holding only the tokens from the scan's place
// on: a whole file's tokens took about 50 times its size (3.4 GB for a 64 MiB scene).
class TokenStream {
 public:
  explicit TokenStream(const std::string& text) : m_s(text) {}
  // Whether token i exists (reading on to it).
  bool has(size_t i) {
    while (m_first + m_window.size() <= i) {
      if (!produce()) return false;
    }
    return true;
  }
  // Token i, which has(i) said exists and which was not released. References stay valid until
  // it is released.
  const Token& operator[](size_t i) {
    has(i);
    return m_window.at(i - m_first);
  }
  // Forgets the tokens before i: the scan never looks further back.
  void release_before(size_t i) {
    while (m_first < i && !m_window.empty()) {
      m_window.pop_front();
      ++m_first;
    }
  }

 private:
  bool produce() {
    const std::string& s = m_s;
    size_t& i = m_pos;
    int& line = m_line;
    size_t& line_start = m_line_start;
    const size_t before = m_window.size();
    std::deque<Token>& out = m_window;
    while (i < s.size() && out.size() == before) {
      const char c = s[i];
      if (c == '\n') {
        ++line;
        line_start = ++i;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
        while (i < s.size() && s[i] != '\n') ++i;
      } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
        int depth = 0;  // POV-Ray's block comments nest
        do {
          if (s.compare(i, 2, "/*") == 0) ++depth, i += 2;
          else if (s.compare(i, 2, "*/") == 0) --depth, i += 2;
          else {
            if (s[i] == '\n') ++line, line_start = i + 1;
            ++i;
          }
        } while (i < s.size() && depth > 0);
      } else if (c == '"') {
        Token t{"", true, line, static_cast<int>(i - line_start) + 1};
        for (++i; i < s.size() && s[i] != '"' && s[i] != '\n'; ++i) {
          if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] != '\n') ++i;
          t.text += s[i];
        }
        if (i < s.size() && s[i] == '"') ++i;
        out.push_back(t);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '#') {
        Token t{std::string(1, c), false, line, static_cast<int>(i - line_start) + 1};
        for (++i; i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'); ++i) t.text += s[i];
        out.push_back(t);
      } else {
        out.push_back({std::string(1, c), false, line, static_cast<int>(i - line_start) + 1});
        ++i;
      }
    }
    return out.size() > before;
  }

  const std::string& m_s;
  size_t m_pos = 0, m_line_start = 0;
  int m_line = 1;
  std::deque<Token> m_window;
  size_t m_first = 0;  // the index of m_window.front()
};

// The number written right after tokens[i] ("0.5", ".5", "1"), which the tokenizer splits into
// one token per character; nullopt when none follows.
std::optional<double> number_after(TokenStream& tokens, size_t i) {
  std::string text;
  for (size_t k = i + 1; tokens.has(k); ++k) {
    const Token& t = tokens[k];
    const bool numeric = !t.is_string && t.text.size() == 1 &&
                         (std::isdigit(static_cast<unsigned char>(t.text[0])) || t.text[0] == '.');
    const bool adjacent = text.empty() || (t.line == tokens[k - 1].line && t.column == tokens[k - 1].column + 1);
    if (!numeric || !adjacent) break;
    text += t.text;
  }
  if (text.empty() || text == ".") return std::nullopt;
  return std::strtod(text.c_str(), nullptr);
}

// The POV-Ray feature at tokens[i] whose pixels depend on the region or order POV-Ray renders
// them in, as {name, why}; {} when there is none. `blocks`: the word before each open '{' around
// it. Each was measured on Debian's POV-Ray 3.7.0.10 at 128x96: a 64x32 region rendered alone
// against the same pixels of the full frame (`+WT1`), and full frames `+WT1` against `+WT2`:
// radiosity 75% of the region's pixels differ, crand 6.5%, area_light jitter 8.0%, media jitter
// 20.6%, media method 1 23.6%, subsurface 15%; every one of them differs between one and two
// threads, and is repeatable with one. Exact, measured likewise: area lights without jitter,
// media methods 2 and 3 without jitter, photons (jitter included), focal blur, +J anti-aliasing
// jitter (its jitter follows the pixel's position).
std::pair<std::string, std::string> whole_frame_feature(TokenStream& tokens, size_t i,
                                                        const std::vector<std::string>& blocks) {
  const std::string& word = tokens[i].text;
  auto innermost = [&](std::initializer_list<const char*> names) -> std::string {
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      for (const char* n : names) {
        if (*it == n) return n;
      }
    }
    return "";
  };
  const std::string stream = "drawn from a random stream that runs on as POV-Ray renders";
  const bool block_follows = tokens.has(i + 1) && tokens[i + 1].text == "{";
  if (word == "radiosity" && block_follows) {
    return {"radiosity", "radiosity: its pretrace and samples follow the region POV-Ray renders"};
  }
  if (word == "crand" && number_after(tokens, i).value_or(1) != 0) {
    return {"crand", "crand (random graininess): " + stream};
  }
  if (word == "jitter") {
    const std::string in = innermost({"light_source", "media", "photons"});
    if (in == "light_source") {
      return {"area_light jitter", "jitter in an area light: its shadow samples are " + stream +
                                       " (without 'jitter' the farm can cut frames into blocks)"};
    }
    if (in == "media" && number_after(tokens, i).value_or(1) != 0) {
      return {"media jitter", "jitter in a media: its samples are " + stream +
                                  " (without 'jitter' the farm can cut frames into blocks)"};
    }
  }
  if (word == "method" && innermost({"media"}) == "media" && number_after(tokens, i) == 1.0) {
    return {"media method 1", "media method 1: its random samples are " + stream +
                                  " (method 3, the default, is exact in blocks)"};
  }
  if (word == "subsurface" && block_follows && innermost({"finish", "global_settings"}) == "finish") {
    return {"subsurface", "subsurface light transport: its samples are " + stream};
  }
  return {};
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw rt::SceneError("cannot read '" + path + "': not an existing regular file");
  if (fs::file_size(path, ec) > k_max_pov_file_bytes) throw rt::SceneError("'" + path + "' is larger than 64 MiB");
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Scanner {
  std::string scene_dir;
  std::vector<std::string> roots, library;
  std::vector<std::string> files, warnings, whole_frame;
  std::set<std::string> whole_frame_seen;  // each feature is reported at its first use
  std::set<std::string> seen;
  // POV-Ray's library files hold features inside declarations a scene may never use (textures.inc
  // declares EMBWood1 with crand): they count only through a name the scene's own files use.
  std::set<std::string> own_words, library_seen;
  std::map<std::string, std::set<std::string>> library_uses;  // declared name -> words of its body
  std::map<std::string, std::pair<std::string, std::string>> library_feature;  // name -> {feature, located why}

  std::optional<std::string> find_in(const std::string& name, const std::vector<std::string>& dirs) {
    if (name.empty() || fs::path(name).is_absolute()) return std::nullopt;
    for (const std::string& d : dirs) {
      std::error_code ec;
      const fs::path p = (fs::path(d) / name).lexically_normal();
      if (fs::is_regular_file(p, ec)) return p.string();
    }
    return std::nullopt;
  }

  // A file of POV-Ray's library: its features by the name declared (#declare, #macro) around them,
  // and the words each declaration uses (a texture may use another that holds the feature).
  void scan_library(const std::string& path, int depth) {
    if (depth > k_max_include_depth) return;
    const std::string text = read_file(path);
    TokenStream tokens(text);
    std::vector<std::string> blocks;
    std::string owner;
    for (size_t i = 0; tokens.has(i + 1); ++i) {
      tokens.release_before(i > 0 ? i - 1 : 0);
      const Token& t = tokens[i];
      if (t.is_string) continue;
      if (t.text == "{") blocks.push_back(i > 0 && !tokens[i - 1].is_string ? tokens[i - 1].text : "");
      if (t.text == "}" && !blocks.empty()) blocks.pop_back();
      if ((t.text == "#declare" || t.text == "#macro") && blocks.empty()) {
        owner = tokens[i + 1].text;
        continue;
      }
      if (t.text == "#include" && tokens[i + 1].is_string) {
        const std::optional<std::string> found = find_in(tokens[i + 1].text, library);
        if (found && library_seen.insert(*found).second) scan_library(*found, depth + 1);
        continue;
      }
      if (owner.empty()) continue;
      library_uses[owner].insert(t.text);
      const auto [feature, why] = whole_frame_feature(tokens, i, blocks);
      if (!feature.empty() && !library_feature.count(owner)) {
        library_feature[owner] = {feature, path + ":" + std::to_string(t.line) + ":" + std::to_string(t.column) + ": " +
                                               why + " (in POV-Ray's library, used through '" + owner + "')"};
      }
    }
  }

  // The library features reached from the scene's own words, after its own (each kind once).
  void add_library_features() {
    std::set<std::string> reached = own_words;
    std::vector<std::string> todo(own_words.begin(), own_words.end());
    while (!todo.empty()) {
      const std::string name = todo.back();
      todo.pop_back();
      const auto uses = library_uses.find(name);
      if (uses == library_uses.end()) continue;
      for (const std::string& u : uses->second) {
        if (reached.insert(u).second) todo.push_back(u);
      }
    }
    for (const auto& [name, found] : library_feature) {
      if (reached.count(name) && whole_frame_seen.insert(found.first).second) whole_frame.push_back(found.second);
    }
  }

  // `conditional`: the #include that led here sits inside a conditional block.
  void scan(const std::string& path, int depth, bool conditional) {
    if (depth > k_max_include_depth) throw rt::SceneError(path + ": #include nested more than 64 deep");
    const std::string text = read_file(path);
    TokenStream tokens(text);
    // POV-Ray looks in its current folder (the scene's, also for names in included files) and
    // then in its library paths; the asset folders stand in for a user's Library_Path.
    std::vector<std::string> dirs = {scene_dir};
    dirs.insert(dirs.end(), roots.begin(), roots.end());
    std::vector<Token> open_blocks;  // the conditional directives around the current token
    std::vector<std::string> blocks;        // the word before each '{' around the current token
    for (size_t i = 0; tokens.has(i + 1); ++i) {
      tokens.release_before(i > 0 ? i - 1 : 0);
      const Token& t = tokens[i];
      if (t.is_string) continue;
      if (k_conditional_directives.count(t.text)) open_blocks.push_back(t);
      if (t.text == "#end" && !open_blocks.empty()) open_blocks.pop_back();
      if (t.text == "{") blocks.push_back(i > 0 && !tokens[i - 1].is_string ? tokens[i - 1].text : "");
      if (t.text == "}" && !blocks.empty()) blocks.pop_back();
      // Names only: a library declaration is reached through a name (digits and marks are not).
      if (std::isalpha(static_cast<unsigned char>(t.text[0])) || t.text[0] == '_') own_words.insert(t.text);
      const auto [feature, why] = whole_frame_feature(tokens, i, blocks);
      if (!feature.empty() && whole_frame_seen.insert(feature).second) {
        whole_frame.push_back(path + ":" + std::to_string(t.line) + ":" + std::to_string(t.column) + ": " + why);
      }
      const bool include = t.text == "#include";
      // `#fopen HANDLE "name" read`: a data file the scene reads with #read (its writes fail in the
      // sandbox, in single and in the farm alike).
      const bool read = t.text == "#fopen" && tokens.has(i + 3) && tokens[i + 2].is_string && tokens[i + 3].text == "read";
      if (!include && !read && !k_file_keywords.count(t.text)) continue;
      const Token& name = tokens[read ? i + 2 : i + 1];
      if (!name.is_string) continue;
      const std::string at = path + ":" + std::to_string(name.line) + ":" + std::to_string(name.column);
      const std::string what = include ? "#include '" + name.text + "'"
                               : read  ? "#fopen '" + name.text + "' read"
                                       : t.text + " file '" + name.text + "'";
      if (fs::path(name.text).is_absolute()) {
        throw rt::SceneError(at + ": " + what + " is an absolute path: name it relative to the scene's folder");
      }
      if (std::optional<std::string> found = find_in(name.text, dirs)) {
        if (std::string outside = rt::outside_roots_reason(*found, roots); !outside.empty()) {
          throw rt::SceneError(at + ": " + what + " leads to '" + *found + "', " + outside);
        }
        if (seen.insert(*found).second) {
          files.push_back(*found);
          if (include) scan(*found, depth + 1, conditional || !open_blocks.empty());
        }
        continue;
      }
      if (std::optional<std::string> own = find_in(name.text, library)) {  // every worker's povray has it
        if (include && library_seen.insert(*own).second) scan_library(*own, depth + 1);
        continue;
      }
      std::string looked;
      for (const std::string& d : library) looked += ", " + d;
      const std::string missing = at + ": " + what +
                                  " not found in the scene's folder, the asset folders or POV-Ray's include folders (" +
                                  (looked.empty() ? std::string("none configured") : looked.substr(2)) + ")";
      if (!open_blocks.empty()) {
        const Token& block = open_blocks.back();
        warnings.push_back(missing + ", inside the " + block.text + " at line " + std::to_string(block.line) +
                             ": POV-Ray reads it only if that branch runs");
      } else if (conditional) {
        warnings.push_back(missing + ", in a file included inside a conditional block");
      } else {
        throw rt::SceneError(missing);
      }
    }
  }
};

}  // namespace

std::vector<std::string> povray_library_dirs() {
  std::vector<std::string> dirs;
  std::ifstream in("/etc/povray/3.7/povray.ini");
  for (std::string line; std::getline(in, line);) {
    const size_t semicolon = line.find(';');
    if (semicolon != std::string::npos) line.erase(semicolon);
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    auto trim = [](std::string& s) {
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
      if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    };
    trim(key);
    trim(value);
    if (key == "Library_Path" && !value.empty()) dirs.push_back(value);
  }
  if (dirs.empty()) dirs.push_back("/usr/share/povray-3.7/include");
  return dirs;
}

PovraySceneFiles povray_scene_files(const std::string& scene_path, const std::vector<std::string>& roots) {
  const std::string scene = fs::absolute(scene_path).lexically_normal().string();
  Scanner s;
  s.scene_dir = fs::path(scene).parent_path().string();
  s.roots = roots;
  s.library = povray_library_dirs();
  s.seen.insert(scene);
  s.scan(scene, 0, false);
  s.add_library_features();
  return {s.files, s.warnings, s.whole_frame};
}

}  // namespace farm
