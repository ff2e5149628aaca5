#include "costs/cost_map.h"
#include "base/file_checks.h"
#include "base/file_write.h"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace farm {

namespace {

const char* const k_magic = "farm-cost-map 1";
// A data line holds at most 65536 costs of ~16 characters; anything longer is not a cost map
// and must not be read into memory whole.
constexpr size_t k_max_line = size_t{16} << 20;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

std::string check_size(int width, int height, int tile, int frames) {
  if (width < 1 || width > CostMap::k_max_side) return "width must be 1.." + std::to_string(CostMap::k_max_side);
  if (height < 1 || height > CostMap::k_max_side) return "height must be 1.." + std::to_string(CostMap::k_max_side);
  if (tile < 1 || tile > CostMap::k_max_tile) return "tile must be 1.." + std::to_string(CostMap::k_max_tile);
  if (frames < 1 || frames > CostMap::k_max_frames) return "frames must be 1.." + std::to_string(CostMap::k_max_frames);
  const int64_t cells = int64_t{ceil_div(width, tile)} * ceil_div(height, tile) * frames;
  if (cells > CostMap::k_max_cells) {
    return std::to_string(cells) + " cells (columns x rows x frames) exceed the limit of " +
           std::to_string(CostMap::k_max_cells);
  }
  return {};
}

// Splits `line` at blanks and tabs.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// Reads a cost map line by line, counting lines, so that every error can name its place.
class Reader {
 public:
  explicit Reader(const std::string& path) : m_path(path), m_in(open_regular(path)) {
    if (!m_in) throw std::runtime_error("cannot open cost map '" + path + "': " + std::strerror(errno));
  }

  // stat() before opening: a FIFO or device would block the read forever.
  static std::ifstream open_regular(const std::string& path) {
    if (Status regular = check_regular_file(path, "cost map"); !regular.ok())
      throw std::invalid_argument(regular.message());
    return std::ifstream(path, std::ios::binary);
  }

  // The next line without its end-of-line; false at the end of the file.
  bool next(std::string& line) {
    line.clear();
    char c;
    bool any = false;
    while (m_in.get(c)) {
      any = true;
      if (c == '\n') break;
      if (line.size() >= k_max_line) fail_at(m_line + 1, "line is longer than " + std::to_string(k_max_line) + " bytes");
      line.push_back(c);
    }
    if (!any) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // files edited on Windows
    ++m_line;
    return true;
  }

  std::string require(const std::string& what) {
    std::string line;
    if (!next(line)) fail_at(m_line + 1, "the file ends where " + what + " was expected");
    return line;
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(m_line, message); }
  [[noreturn]] void fail_at(int line, const std::string& message) const {
    throw std::invalid_argument("cost map '" + m_path + "', line " + std::to_string(line) + ": " + message);
  }

 private:
  std::string m_path;
  std::ifstream m_in;
  int m_line = 0;
};

// One header integer in [lo, hi]; anything else (sign, junk, overflow) is an error.
int parse_int(Reader& r, std::string_view name, std::string_view text, int lo, int hi) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) {
    r.fail(std::string(name) + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got '" +
           std::string(text) + "'");
  }
  return static_cast<int>(v);
}

double parse_cost(Reader& r, std::string_view text, int column) {
  double v = 0;
  // from_chars, unlike strtod, ignores the locale; it does accept "nan" and "inf", refused below.
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string where = "cost " + std::to_string(column + 1) + " ('" + std::string(text.substr(0, 40)) + "')";
  if (ec == std::errc::result_out_of_range) r.fail(where + " is out of range");
  if (ec != std::errc() || end != text.data() + text.size()) r.fail(where + " is not a number");
  if (!std::isfinite(v)) r.fail(where + " is not finite");
  if (v < 0) r.fail(where + " is negative");
  return v;
}

// Bilinear interpolation along one axis over cell centres that need not be evenly spaced
// (the last tile may be narrower): the two neighbouring cells and the weight of the second.
struct Lerp {
  int i0 = 0, i1 = 0;
  double w1 = 0;
};

Lerp lerp_at(const std::vector<double>& centres, double pos) {
  auto it = std::upper_bound(centres.begin(), centres.end(), pos);
  if (it == centres.begin()) return {0, 0, 0};  // clamped: before the first centre
  if (it == centres.end()) {
    const int last = static_cast<int>(centres.size()) - 1;
    return {last, last, 0};
  }
  const int i1 = static_cast<int>(it - centres.begin()), i0 = i1 - 1;
  return {i0, i1, (pos - centres[i0]) / (centres[i1] - centres[i0])};
}

// Pixel-coordinate centres of the tiles along an axis of `extent` pixels.
std::vector<double> tile_centres(int extent, int tile) {
  std::vector<double> c;
  for (int start = 0; start < extent; start += tile) c.push_back(0.5 * (start + std::min(extent, start + tile)));
  return c;
}

}  // namespace

CostMap::CostMap(int width, int height, int tile, int frames) {
  if (std::string why = check_size(width, height, tile, frames); !why.empty()) throw std::invalid_argument("cost map: " + why);
  m_width = width;
  m_height = height;
  m_tile = tile;
  m_frames = frames;
  m_columns = ceil_div(width, tile);
  m_rows = ceil_div(height, tile);
  m_seconds.assign(static_cast<size_t>(m_columns) * m_rows * frames, 0.0);
}

int64_t CostMap::tile_pixels(int column, int row) const {
  const int w = std::min(m_tile, m_width - column * m_tile), h = std::min(m_tile, m_height - row * m_tile);
  return int64_t{w} * h;
}

size_t CostMap::index(int frame, int column, int row) const {
  if (frame < 1 || frame > m_frames || column < 0 || column >= m_columns || row < 0 || row >= m_rows) {
    throw std::out_of_range("cost map: tile (" + std::to_string(column) + ", " + std::to_string(row) + ") of frame " +
                            std::to_string(frame) + " is outside the " + std::to_string(m_columns) + " x " +
                            std::to_string(m_rows) + " x " + std::to_string(m_frames) + " map");
  }
  return (static_cast<size_t>(frame - 1) * m_rows + row) * m_columns + column;
}

double& CostMap::at(int frame, int column, int row) { return m_seconds[index(frame, column, row)]; }
double CostMap::at(int frame, int column, int row) const { return m_seconds[index(frame, column, row)]; }

double CostMap::cost(const Block& b) const {
  // Clipped to the image: a block never extends beyond it, but a caller's arithmetic might.
  const int x0 = std::max(0, b.x), y0 = std::max(0, b.y);
  const int x1 = std::min(m_width, b.x + b.width), y1 = std::min(m_height, b.y + b.height);
  if (x1 <= x0 || y1 <= y0) return 0.0;
  double sum = 0;
  for (int row = y0 / m_tile; row <= (y1 - 1) / m_tile; ++row) {
    const int oy = std::min(y1, (row + 1) * m_tile) - std::max(y0, row * m_tile);
    for (int column = x0 / m_tile; column <= (x1 - 1) / m_tile; ++column) {
      const int ox = std::min(x1, (column + 1) * m_tile) - std::max(x0, column * m_tile);
      sum += at(b.frame, column, row) * (static_cast<double>(ox) * oy) / static_cast<double>(tile_pixels(column, row));
    }
  }
  return sum;
}

double CostMap::costliest_min_block(int block_size, int min_block) const {
  min_block = std::max(1, min_block);
  double most = 0;
  std::vector<Block> stack;
  for (int frame = 1; frame <= m_frames; ++frame) {
    stack = tile_frame(frame, m_width, m_height, std::max(1, block_size));
    while (!stack.empty()) {
      Block b = stack.back();
      stack.pop_back();
      if (b.size() <= min_block) {
        most = std::max(most, cost(b));
      } else {
        for (const Block& piece : split_block(b, min_block)) stack.push_back(piece);
      }
    }
  }
  return most;
}

double CostMap::frame_total(int frame) const {
  if (frame < 1 || frame > m_frames) throw std::out_of_range("cost map: no frame " + std::to_string(frame));
  const size_t n = static_cast<size_t>(m_columns) * m_rows;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += m_seconds[static_cast<size_t>(frame - 1) * n + i];
  return sum;
}

double CostMap::total() const {
  double sum = 0;
  for (int f = 1; f <= m_frames; ++f) sum += frame_total(f);
  return sum;
}

CostMap CostMap::scaled(int width, int height, double work_factor, int tile) const {
  if (!(work_factor >= 0) || !std::isfinite(work_factor)) throw std::invalid_argument("cost map: bad work factor");
  CostMap out(width, height, tile, m_frames);
  const std::vector<double> old_cx = tile_centres(m_width, m_tile), old_cy = tile_centres(m_height, m_tile);
  const std::vector<double> new_cx = tile_centres(width, tile), new_cy = tile_centres(height, tile);
  // The per-pixel cost of each old tile: what is resampled (a tile's cost depends on its size).
  auto density = [&](int frame, int column, int row) { return at(frame, column, row) / tile_pixels(column, row); };
  const double pixel_ratio = (static_cast<double>(width) * height) / (static_cast<double>(m_width) * m_height);
  for (int f = 1; f <= m_frames; ++f) {
    double sum = 0;
    for (int row = 0; row < out.m_rows; ++row) {
      const Lerp ly = lerp_at(old_cy, new_cy[row] * m_height / height);
      for (int column = 0; column < out.m_columns; ++column) {
        const Lerp lx = lerp_at(old_cx, new_cx[column] * m_width / width);
        const double top = (1 - lx.w1) * density(f, lx.i0, ly.i0) + lx.w1 * density(f, lx.i1, ly.i0);
        const double bottom = (1 - lx.w1) * density(f, lx.i0, ly.i1) + lx.w1 * density(f, lx.i1, ly.i1);
        sum += out.at(f, column, row) = ((1 - ly.w1) * top + ly.w1 * bottom) * out.tile_pixels(column, row);
      }
    }
    // Point samples only approximate the old total; renormalising makes the frame's total exact.
    const double target = frame_total(f) * pixel_ratio * work_factor;
    for (int row = 0; row < out.m_rows; ++row) {
      for (int column = 0; column < out.m_columns; ++column) {
        double& c = out.at(f, column, row);
        // When a shrunk map's samples all miss the costly tiles, spread the cost evenly.
        c = sum > 0 ? c * (target / sum) : target * out.tile_pixels(column, row) / (static_cast<double>(width) * height);
      }
    }
  }
  out.note = note;
  return out;
}

void CostMap::write(const std::string& path) const {
  std::string text = std::string(k_magic) + "\n";
  text += "width " + std::to_string(m_width) + " height " + std::to_string(m_height) + " tile " + std::to_string(m_tile) +
          " frames " + std::to_string(m_frames) + "\n";
  std::string one_line = note;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  std::replace(one_line.begin(), one_line.end(), '\r', ' ');
  text += "note " + one_line + "\n";
  char buf[32];
  for (size_t i = 0; i < m_seconds.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", m_seconds[i]);
    text += buf;
    text += (i + 1) % static_cast<size_t>(m_columns) == 0 ? '\n' : ' ';
  }
  if (Status s = write_file_replacing(path, text, "cost map"); !s.ok()) throw std::runtime_error(s.message());
}

CostMap CostMap::read(const std::string& path) {
  Reader r(path);
  if (r.require("the magic line '" + std::string(k_magic) + "'") != k_magic) {
    r.fail("not a cost map: the first line must be '" + std::string(k_magic) + "'");
  }
  const std::string header = r.require("the header line");
  const std::vector<std::string_view> h = tokens(header);
  const char* const keys[] = {"width", "height", "tile", "frames"};
  if (h.size() != 8 || h[0] != keys[0] || h[2] != keys[1] || h[4] != keys[2] || h[6] != keys[3]) {
    r.fail("the header must be 'width W height H tile T frames F'");
  }
  const int width = parse_int(r, "width", h[1], 1, k_max_side), height = parse_int(r, "height", h[3], 1, k_max_side);
  const int tile = parse_int(r, "tile", h[5], 1, k_max_tile), frames = parse_int(r, "frames", h[7], 1, k_max_frames);
  if (std::string why = check_size(width, height, tile, frames); !why.empty()) r.fail(why);

  const std::string note_line = r.require("the note line");
  if (note_line.rfind("note", 0) != 0 || (note_line.size() > 4 && note_line[4] != ' ')) {
    r.fail("the third line must be 'note' followed by free text");
  }
  // Values are collected as they are read, so a header that promises more than the file holds
  // costs no more memory than the file itself.
  const int columns = ceil_div(width, tile), rows = ceil_div(height, tile);
  std::vector<double> values;
  std::string line;
  for (int f = 1; f <= frames; ++f) {
    for (int row = 0; row < rows; ++row) {
      line = r.require("row " + std::to_string(row + 1) + " of " + std::to_string(rows) + " of frame " +
                       std::to_string(f) + " of " + std::to_string(frames));
      const std::vector<std::string_view> t = tokens(line);
      if (static_cast<int>(t.size()) != columns) {
        r.fail("expected " + std::to_string(columns) + " costs (row " + std::to_string(row + 1) + " of frame " +
               std::to_string(f) + "), found " + std::to_string(t.size()));
      }
      for (int c = 0; c < columns; ++c) values.push_back(parse_cost(r, t[c], c));
    }
  }
  while (r.next(line)) {
    if (!tokens(line).empty()) r.fail("unexpected data after the last row of the last frame");
  }
  CostMap map(width, height, tile, frames);
  map.m_seconds = std::move(values);
  map.note = note_line.size() > 5 ? note_line.substr(5) : std::string();
  return map;
}

}  // namespace farm
