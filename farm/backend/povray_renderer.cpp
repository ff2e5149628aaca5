#include "backend/povray_renderer.h"
#include "backend/text_file.h"

#include <chrono>
#include <OpenImageIO/imageio.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "backend/povray_scene.h"
#include "backend/renderer_process.h"
#include "backend/renderer_version.h"
#include "image/image_io.h"
#include "scene/scene_desc.h"

namespace farm {

namespace {

namespace fs = std::filesystem;

// Runs `command` confined in `c`, with stdout and stderr into `log`, for at most `seconds`;
// returns the exit status (-1: could not start, 128 + N: killed by signal N), or nullopt if it
// was stopped at the time limit. `running` (if given) holds the process while it renders
// `block`, so that it can be stopped.
std::optional<int> run_confined(const std::vector<std::string>& command, const Confinement& c, const std::string& log,
                                const RendererLimits& limits, RunningProcesses* running = nullptr,
                                const Block& block = Block{}) {
  RendererSpawn spawn;
  spawn.argv = confined_command(c, command);
  spawn.workdir = c.workdir;
  spawn.output_path = log;
  spawn.memory_bytes = memory_bytes(limits);
  if (sandbox_disabled()) spawn.env = {"HOME=" + c.scratch, "TMPDIR=" + c.scratch};
  pid_t pid = -1;
  try {
    pid = spawn_renderer(spawn);
  } catch (const std::runtime_error&) {
    return -1;
  }
  RunningProcesses local;
  if (!running) running = &local;
  running->add(pid, block);
  const std::optional<int> status = running->wait(pid, time_limit_seconds(limits));
  if (!status) return std::nullopt;
  if (WIFSIGNALED(*status)) return 128 + WTERMSIG(*status);
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

// POV-Ray's complaint: from the first "Parse Error" (or "Error") line to the "Fatal" line.
std::string povray_complaint(const std::string& log, bool& parse_error) {
  std::istringstream in(log);
  std::string out;
  bool in_error = false;
  parse_error = false;
  for (std::string line; std::getline(in, line);) {
    // "Possible Parse Error" is a warning (a missing assumed_gamma): the render goes on.
    const bool possible = line.find("Possible Parse Error") != std::string::npos;
    if (!possible && line.find("Parse Error") != std::string::npos) parse_error = true;
    if (!in_error && !possible && (line.find("Error") != std::string::npos || line.find("error") != std::string::npos)) {
      in_error = true;
    }
    if (!in_error) continue;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    out += (out.empty() ? "" : " ") + line.substr(start);
    if (line.find("Fatal") != std::string::npos || out.size() > 600) break;
  }
  if (!out.empty()) return out;
  // No error line (an option POV-Ray could not take, a crash): its last words, whatever they are,
  // but for its echo of the command line and the missing user configuration it always mentions.
  std::vector<std::string> said;
  std::istringstream again(log);
  for (std::string line; std::getline(again, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos || line.rfind("povray ", start) == start ||
        line.find("cannot open the user configuration file") != std::string::npos) {
      continue;
    }
    said.push_back(line.substr(start));
  }
  for (size_t i = said.size() > 3 ? said.size() - 3 : 0; i < said.size(); ++i) out += (out.empty() ? "" : " ") + said[i];
  return out.substr(0, 600);
}

// A path as one POV-Ray switch's value. POV-Ray reads each argument as an INI line: a space, ';'
// or '#' in a bare name ends it or starts a comment, and every render failed with only "Failed to
// parse command-line option". Quoted, those are taken; a double quote cannot be.
std::string povray_path(const std::string& path, const std::string& what) {
  if (path.find('"') != std::string::npos) {
    throw std::runtime_error("POV-Ray cannot be given a path with a double quote (\") in it: the " + what + " '" + path +
                             "'" + (what == "scene file" ? ": rename it" : ": set TMPDIR to a folder without one"));
  }
  if (path.find_first_of(" \t;#,=") == std::string::npos) return path;
  return "\"" + path + "\"";
}

// Switches the user may give: the look of the image, not its size, region, files or threads.
struct Allowed {
  const char* name;
  const char* what;
};
constexpr Allowed k_allowed[] = {{"BS", "block size: the farm's grid too"}, {"AM", "anti-aliasing method"}, {"AG", "anti-aliasing gamma"},
                                 {"A", "anti-aliasing (threshold)"}, {"R", "anti-aliasing depth"},
                                 {"J", "jitter"}, {"Q", "quality"}, {"MV", "language version"},
                                 {"KFI", "first frame"}, {"KFF", "last frame"}, {"KI", "first clock value"},
                                 {"KF", "last clock value"}, {"KC", "cyclic animation"}};

}  // namespace

std::string povray_version() { return renderer_version({"povray", "POV-Ray ", "POV-Ray", 60}); }

std::vector<std::string> povray_options(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (w.rfind("Declare=", 0) == 0 && w.find('=', 8) != std::string::npos) {
      // POV-Ray takes a number here and fails on anything else ("Failed to parse command-line
      // option", no more): say so before any render.
      const size_t eq = w.find('=', 8);
      const std::string name = w.substr(8, eq - 8), value = w.substr(eq + 1);
      const bool identifier = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                              std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
      char* end = nullptr;
      errno = 0;
      const double number = std::strtod(value.c_str(), &end);
      if (!identifier || value.empty() || end != value.c_str() + value.size() || errno == ERANGE || !std::isfinite(number)) {
        throw std::invalid_argument("POV-Ray option '" + w + "': Declare=NAME=VALUE takes an identifier and a number (POV-Ray "
                                    "declares only floats from its command line; declare strings in the scene)");
      }
      out.push_back(w);
      continue;
    }
    bool ok = false;
    if (w.size() >= 2 && (w[0] == '+' || w[0] == '-')) {
      std::string upper = w.substr(1);
      std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
      for (const Allowed& a : k_allowed) {
        const std::string name = a.name;
        if (upper.rfind(name, 0) != 0) continue;
        const std::string rest = upper.substr(name.size());
        // Clock values may be negative; frame numbers and the rest are plain numbers.
        const bool clock = name == "KI" || name == "KF";
        const std::string digits = clock && !rest.empty() && rest[0] == '-' ? rest.substr(1) : rest;
        ok = (rest.empty() && name != "KFI" && name != "KFF" && !clock) ||
             (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; }));
        if ((name == "KFI" || name == "KFF") && rest.find('.') != std::string::npos) ok = false;
        if (name == "BS") {
          ok = !rest.empty() && rest.size() <= 4 &&
               std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
               std::stoi(rest) >= 4;
          if (!ok) {
            throw std::invalid_argument("POV-Ray option '" + w + "': +BS takes POV-Ray's block size, a whole number of "
                                        "pixels in 4..9999 (the farm's blocks follow that grid)");
          }
        }
        break;
      }
    }
    if (!ok) {
      std::string allowed;
      for (const Allowed& a : k_allowed) allowed += std::string(allowed.empty() ? "" : ", ") + "+" + a.name + " (" + a.what + ")";
      throw std::invalid_argument("POV-Ray option '" + w + "' is not one the farm passes on (the farm sets size, region, "
                                  "output, display and threads itself); allowed: " + allowed + ", Declare=NAME=VALUE");
    }
    out.push_back(w);
  }
  return out;
}

PovrayFrames povray_frames(const std::vector<std::string>& options) {
  PovrayFrames f;
  bool last_given = false;
  for (const std::string& o : options) {
    if (o.size() < 5 || (o[0] != '+' && o[0] != '-')) continue;
    std::string upper = o.substr(1, 3);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    if (upper != "KFI" && upper != "KFF") continue;
    long v = 0;
    try {
      v = std::stol(o.substr(4));
    } catch (const std::exception&) {
      throw std::invalid_argument("POV-Ray option '" + o + "': a frame number is a whole number");
    }
    if (v < 1 || v > 99999) throw std::invalid_argument("POV-Ray option '" + o + "': frame numbers are 1..99999 here");
    if (upper == "KFI") f.first = static_cast<int>(v);
    if (upper == "KFF") {
      f.last = static_cast<int>(v);
      last_given = true;
    }
  }
  if (!last_given) f.last = f.first;  // no +KFF: one frame, as POV-Ray renders without animation
  if (f.last < f.first) {
    throw std::invalid_argument("POV-Ray options: the last frame (+KFF" + std::to_string(f.last) + ") comes before the first (+KFI" +
                                std::to_string(f.first) + ")");
  }
  f.animated = last_given;
  return f;
}

int povray_grid(const std::vector<std::string>& options) {
  int grid = k_povray_grid;
  for (const std::string& o : options) {
    if (o.size() > 3 && (o[0] == '+' || o[0] == '-') && std::toupper(static_cast<unsigned char>(o[1])) == 'B' &&
        std::toupper(static_cast<unsigned char>(o[2])) == 'S') {
      grid = std::stoi(o.substr(3));
    }
  }
  return grid;
}

void povray_render(const PovraySettings& s, int frame, int x, int y, int width, int height, float* rgba,
                   RunningProcesses* running) {
  const fs::path scene = fs::absolute(s.scene_path).lexically_normal();
  const std::string dir = scene.parent_path().string();
  // Its image and log in a scratch folder of this run, the only place it may write, gone after
  // it (the scene's folder may be a user's, read-only, or the worker's cache: not ours to change).
  ScratchFolder scratch;
  Confinement confinement;
  confinement.readable = {dir};
  for (const std::string& d : povray_library_dirs()) confinement.readable.push_back(d);
  confinement.readable.insert(confinement.readable.end(), s.readable.begin(), s.readable.end());
  confinement.config = {"/etc/povray"};
  confinement.scratch = scratch.path();
  confinement.workdir = dir;
  const std::string stem = "block";
  const fs::path tmp = scratch.path();
  const std::string image = (tmp / (stem + ".png")).string(), log = (tmp / (stem + ".log")).string();
  std::vector<std::string> args = {"povray",
                                   "+I" + povray_path(scene.filename().string(), "scene file"),
                                   "+O" + povray_path(image, "temporary folder"),
                                   "+FN8",
                                   "+W" + std::to_string(s.width),
                                   "+H" + std::to_string(s.height),
                                   "+BS" + std::to_string(povray_grid(s.options)),
                                   "+WT" + std::to_string(std::max(1, s.threads)),
                                   "-D",
                                   "-V",
                                   "-P"};
  const bool whole = x == 0 && y == 0 && width == s.width && height == s.height;
  if (!whole) {
    args.insert(args.end(), {"+SR" + std::to_string(y + 1), "+ER" + std::to_string(y + height),
                             "+SC" + std::to_string(x + 1), "+EC" + std::to_string(x + width)});
  }
  args.insert(args.end(), s.options.begin(), s.options.end());
  // An animation: POV-Ray's own frame (its clock and frame_number), alone, as +SF/+EF make it.
  const PovrayFrames frames = povray_frames(s.options);
  std::string written = image;
  if (frames.animated) {
    const int pov_frame = frames.first + frame - 1;
    if (frame < 1 || pov_frame > frames.last) throw std::runtime_error("frame " + std::to_string(frame) + " is not in the animation");
    args.insert(args.end(), {"+SF" + std::to_string(pov_frame), "+EF" + std::to_string(pov_frame)});
    // POV-Ray numbers an animation's output file: farm-povray-...7.png or ...07.png.
    const int digits = static_cast<int>(std::to_string(frames.last).size());
    std::string number = std::to_string(pov_frame);
    number.insert(0, static_cast<size_t>(std::max(0, digits - static_cast<int>(number.size()))), '0');
    written = (tmp / (stem + number + ".png")).string();
  }
  const std::optional<int> ran = run_confined(args, confinement, log, s.limits, running, Block{frame, x, y, width, height});
  if (!ran) {
    throw std::runtime_error("povray did not finish " + std::string(whole ? "the frame" : "the region " + std::to_string(width) + "x" +
                             std::to_string(height) + " at " + std::to_string(x) + "," + std::to_string(y)) + " within " +
                             std::to_string(time_limit_seconds(s.limits)) +
                             " s, the job's time limit for one renderer run: a parse that never ends, or a "
                             "block that needs a longer limit");
  }
  const int rc = *ran;
  if (rc == -1 || rc == 127) povray_version();  // throws the "install povray" message
  auto in = rc == 0 ? OIIO::ImageInput::open(written) : nullptr;
  if (!in) {
    bool parse_error = false;
    const std::string complaint = povray_complaint(read_text(log), parse_error);
    if (parse_error) throw rt::SceneError(s.scene_path + ": POV-Ray: " + complaint);
    const std::string how = rc > 128 ? "was killed by signal " + std::to_string(rc - 128) : "failed (exit " + std::to_string(rc) + ")";
    // POV-Ray out of memory says only "Uncategorized error" (or is killed): name the limit.
    const std::string limit = rc > 128 ? "" : " (each POV-Ray process may use " + std::to_string(memory_bytes(s.limits) >> 20) +
                                                  " MiB of memory, the job's renderer memory limit)";
    throw std::runtime_error("povray " + how + (complaint.empty() ? "" : ": " + complaint) + limit);
  }
  const OIIO::ImageSpec& spec = in->spec();
  if (spec.width != s.width || spec.height != s.height || spec.nchannels < 3) {
    throw std::runtime_error("povray wrote a " + std::to_string(spec.width) + "x" + std::to_string(spec.height) + " image, not " +
                             std::to_string(s.width) + "x" + std::to_string(s.height));
  }
  const int channels = spec.nchannels;
  std::vector<uint8_t> rows(static_cast<size_t>(s.width) * height * channels);
  if (!in->read_scanlines(0, 0, y, y + height, 0, 0, channels, OIIO::TypeDesc::UINT8, rows.data())) {
    throw std::runtime_error("cannot read povray's image: " + in->geterror());
  }
  // 8-bit sRGB back to linear floats: exact both ways (linear_to_srgb8 returns every byte).
  const float* table = srgb8_to_linear_table();
  for (int j = 0; j < height; ++j) {
    for (int i = 0; i < width; ++i) {
      const uint8_t* p = &rows[(static_cast<size_t>(j) * s.width + x + i) * channels];
      float* o = &rgba[(static_cast<size_t>(j) * width + i) * 4];
      o[0] = table[p[0]];
      o[1] = table[p[1]];
      o[2] = table[p[2]];
      o[3] = 1.0f;
    }
  }
}

PovrayRenderer::PovrayRenderer(PovraySettings settings) : m_settings(std::move(settings)) {
  float probe[4 * 4 * 4];
  const auto start = std::chrono::steady_clock::now();
  povray_render(m_settings, 1, 0, 0, std::min(4, m_settings.width), std::min(4, m_settings.height), probe);
  m_seconds_per_block = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

uint64_t PovrayRenderer::render(const Block& b, float* rgba, float* /*carried: none, carried_floats() is 0*/) {
  povray_render(m_settings, b.frame, b.x, b.y, b.width, b.height, rgba, &m_running);
  return 0;
}

void PovrayRenderer::interrupt(const Block& b) { m_running.kill(b); }

void PovrayRenderer::interrupt_all() { m_running.kill_all(); }

int povray_default_block(int width, int height, int grid) {
  for (int side : {128, 64}) {
    if (side < grid) break;
    const long long blocks = static_cast<long long>((width + side - 1) / side) * ((height + side - 1) / side);
    if (blocks >= k_povray_min_blocks) return side;
  }
  return std::max(k_povray_grid, grid);
}

}  // namespace farm
