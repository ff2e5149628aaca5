#include "backend/blender_renderer.h"

#include <OpenImageIO/imageio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "backend/blender_process.h"
#include "backend/renderer_process.h"
#include "backend/renderer_version.h"
#include "image/image_io.h"
#include "scene/scene_desc.h"

namespace farm {

namespace fs = std::filesystem;

namespace {

std::atomic<uint64_t> g_block_counter{0};

int whole_number(const std::string& word, const std::string& text) {
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v < -1000000000L || v > 1000000000L) {
    throw std::invalid_argument("Blender option '" + word + "' does not end in a whole number");
  }
  return static_cast<int>(v);
}

const char* pixels_word(BlenderPixels p) {
  switch (p) {
    case BlenderPixels::display8: return "display8";
    case BlenderPixels::layers: return "layers";
    case BlenderPixels::linear: break;
  }
  return "linear";
}

std::vector<std::string> bridge_args(const BlenderSettings& s) {
  std::vector<std::string> args = {"--pixels", pixels_word(s.job.pixels),
                                   "--threads", std::to_string(std::max(1, s.threads)),
                                   "--width", std::to_string(s.width),
                                   "--height", std::to_string(s.height),
                                   "--samples", std::to_string(s.samples)};
  if (s.camera) args.insert(args.end(), {"--camera", *s.camera});
  return args;
}

}  // namespace

std::string blender_version() { return renderer_version({"blender", "Blender ", "Blender", 120}); }

BlenderSceneInfo blender_scene_info(const std::string& scene_path, const RendererLimits& limits) {
  BlenderProcess process(scene_path, {}, limits);
  const std::string reply = process.request("info");
  if (reply.rfind("info ", 0) != 0) throw std::runtime_error("blender's bridge answered '" + reply.substr(0, 200) + "' to info");
  BlenderSceneInfo info;
  try {
    const nlohmann::json j = nlohmann::json::parse(reply.substr(5));
    info.version = j.at("version").get<std::string>();
    info.engine = j.at("engine").get<std::string>();
    info.width = j.at("width").get<int>();
    info.height = j.at("height").get<int>();
    info.frame_start = j.at("frame_start").get<int>();
    info.frame_end = j.at("frame_end").get<int>();
    info.frame_step = j.at("frame_step").get<int>();
    info.samples = j.at("samples").get<int>();
    info.camera = j.at("camera").get<std::string>();
    info.cameras = j.at("cameras").get<std::vector<std::string>>();
    info.multiview = j.at("multiview").get<bool>();
    for (const auto& f : j.at("files")) {
      info.files.push_back({f.at("path").get<std::string>(), f.at("raw").get<std::string>(), f.at("kind").get<std::string>(),
                            f.at("name").get<std::string>()});
    }
    info.problems = j.at("problems").get<std::vector<std::string>>();
    info.whole_frame = j.at("whole_frame").get<std::vector<std::string>>();
    info.multilayer = j.at("multilayer").get<bool>();
    info.view_layer = j.at("view_layer").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("blender's bridge answered info in an unexpected form: ") + e.what());
  }
  return info;
}

std::vector<std::string> blender_option_words(const BlenderJobOptions& o) {
  return {std::string("pixels=") + pixels_word(o.pixels),
          "frame_start=" + std::to_string(o.frame_start), "frame_step=" + std::to_string(o.frame_step)};
}

BlenderJobOptions parse_blender_options(const std::vector<std::string>& words) {
  BlenderJobOptions o;
  for (const std::string& w : words) {
    const size_t eq = w.find('=');
    const std::string key = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (key == "pixels" && (value == "linear" || value == "display8" || value == "layers")) {
      o.pixels = value == "linear" ? BlenderPixels::linear : value == "display8" ? BlenderPixels::display8 : BlenderPixels::layers;
    } else if (key == "frame_start") {
      o.frame_start = whole_number(w, value);
    } else if (key == "frame_step") {
      o.frame_step = whole_number(w, value);
      if (o.frame_step < 1) throw std::invalid_argument("Blender option '" + w + "': the frame step is at least 1");
    } else {
      throw std::invalid_argument("'" + w + "' is not a Blender job option (pixels=linear|display8|layers, frame_start=N, frame_step=N)");
    }
  }
  return o;
}

std::unique_ptr<BlenderProcess> start_blender(const BlenderSettings& s) {
  return std::make_unique<BlenderProcess>(s.scene_path, bridge_args(s), s.limits);
}

void blender_render(BlenderProcess& process, const BlenderSettings& s, int frame, int x, int y, int width, int height,
                    float* rgba, float* carried) {
  const bool display8 = s.job.pixels == BlenderPixels::display8;
  const std::string file = (fs::path(process.scratch()) / ("block-" + std::to_string(g_block_counter++) +
                                                          (display8 ? ".png" : ".exr")))
                               .string();
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{file};
  const int blender_frame = s.job.frame_start + (frame - 1) * s.job.frame_step;
  const std::string reply = process.request("render " + std::to_string(blender_frame) + " " + std::to_string(x) + " " +
                                            std::to_string(y) + " " + std::to_string(width) + " " +
                                            std::to_string(height) + " " + file);
  if (reply != "ok") {
    throw std::runtime_error("Blender did not render block " + std::to_string(width) + "x" + std::to_string(height) +
                             " at " + std::to_string(x) + "," + std::to_string(y) + ": " +
                             (reply.rfind("error ", 0) == 0 ? reply.substr(6) : reply));
  }
  auto in = OIIO::ImageInput::open(file);
  if (!in) throw std::runtime_error("cannot read Blender's block image: " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  if (spec.width != width || spec.height != height || spec.nchannels < 3) {
    throw std::runtime_error("Blender wrote a " + std::to_string(spec.width) + "x" + std::to_string(spec.height) +
                             " block, not " + std::to_string(width) + "x" + std::to_string(height));
  }
  const int channels = spec.nchannels;
  const size_t pixels = static_cast<size_t>(width) * height;
  if (display8) {
    std::vector<uint8_t> bytes(pixels * channels);
    if (!in->read_image(0, 0, 0, channels, OIIO::TypeDesc::UINT8, bytes.data())) {
      throw std::runtime_error("cannot read Blender's block image: " + in->geterror());
    }
    // 8-bit display values back to the floats the farm's encoder turns into the same bytes.
    const float* table = srgb8_to_linear_table();
    for (size_t i = 0; i < pixels; ++i) {
      for (int c = 0; c < 3; ++c) rgba[4 * i + c] = table[bytes[i * channels + c]];
      rgba[4 * i + 3] = 1.0f;
    }
    return;
  }
  std::vector<float> floats(pixels * channels);
  if (!in->read_image(0, 0, 0, channels, OIIO::TypeDesc::FLOAT, floats.data())) {
    throw std::runtime_error("cannot read Blender's block image: " + in->geterror());
  }
  if (s.job.pixels == BlenderPixels::layers) {
    // Each channel the job carries, found by its name in the block's file (OpenEXR keeps its own order).
    if (s.channels.size() < 3 || spec.channelnames.size() != s.channels.size())
      throw std::runtime_error("Blender wrote a block of " + std::to_string(spec.channelnames.size()) +
                               " channels, the job carries " + std::to_string(s.channels.size()));
    std::vector<size_t> at(s.channels.size());
    for (size_t k = 0; k < s.channels.size(); ++k) {
      auto found = std::find(spec.channelnames.begin(), spec.channelnames.end(), s.channels[k]);
      if (found == spec.channelnames.end()) throw std::runtime_error("Blender's block has no channel '" + s.channels[k] + "'");
      at[k] = static_cast<size_t>(found - spec.channelnames.begin());
    }
    // The alpha of the colour's layer, for the farm's RGBA (the tile map): its ".A" beside ".R".
    const std::string alpha = s.channels[0].substr(0, s.channels[0].size() - 1) + "A";
    auto alpha_at = std::find(s.channels.begin(), s.channels.end(), alpha);
    const size_t carried_floats = s.channels.size() - 3;
    for (size_t i = 0; i < pixels; ++i) {
      const float* p = &floats[i * channels];
      for (int c = 0; c < 3; ++c) rgba[4 * i + c] = p[at[c]];
      rgba[4 * i + 3] = alpha_at == s.channels.end() ? 1.0f : p[at[alpha_at - s.channels.begin()]];
      if (carried) {
        for (size_t k = 0; k < carried_floats; ++k) carried[i * carried_floats + k] = p[at[3 + k]];
      }
    }
    return;
  }
  for (size_t i = 0; i < pixels; ++i) {
    for (int c = 0; c < 3; ++c) rgba[4 * i + c] = floats[i * channels + c];
    rgba[4 * i + 3] = channels >= 4 ? floats[i * channels + 3] : 1.0f;
  }
}

BlenderOutput blender_output(const BlenderSettings& s, const std::string& view_layer) {
  std::unique_ptr<BlenderProcess> process = start_blender(s);
  const std::string file = (fs::path(process->scratch()) / "channels.exr").string();
  struct Remove {
    std::string path;
    ~Remove() { ::unlink(path.c_str()); }
  } remove{file};
  const std::string reply = process->request("render " + std::to_string(s.job.frame_start) + " 0 0 1 1 " + file);
  if (reply != "ok") {
    throw std::runtime_error("Blender did not render the pixel that tells its channels: " +
                             (reply.rfind("error ", 0) == 0 ? reply.substr(6) : reply));
  }
  auto in = OIIO::ImageInput::open(file);
  if (!in) throw std::runtime_error("cannot read the channels Blender writes: " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  const std::vector<std::string> written = spec.channelnames;
  BlenderOutput out;
  for (const OIIO::ParamValue& p : spec.extra_attribs) {
    if (p.name().string().rfind("cryptomatte/", 0) == 0 && p.type() == OIIO::TypeDesc::STRING)
      out.attributes.emplace_back(p.name().string(), p.get_string());
  }
  // The colour: the active view layer's Combined R, G, B, else the first layer's that has one.
  auto r = std::find(written.begin(), written.end(), view_layer + ".Combined.R");
  if (r == written.end()) {
    r = std::find_if(written.begin(), written.end(), [](const std::string& n) {
      return n.size() > 11 && n.compare(n.size() - 11, 11, ".Combined.R") == 0;
    });
  }
  if (r == written.end()) throw rt::SceneError(s.scene_path + ": no view layer writes a Combined pass");
  const std::string layer = r->substr(0, r->size() - 2);
  std::vector<std::string> channels = {layer + ".R", layer + ".G", layer + ".B"};
  for (const std::string& c : {channels[1], channels[2]}) {
    if (std::find(written.begin(), written.end(), c) == written.end())
      throw rt::SceneError(s.scene_path + ": its Combined pass has no channel '" + c + "'");
  }
  for (const std::string& name : written) {
    if (std::find(channels.begin(), channels.end(), name) != channels.end()) continue;
    if (name.find('|') != std::string::npos)
      throw rt::SceneError(s.scene_path + ": the channel '" + name + "' has a '|' in its name, which the farm's job "
                           "identity uses between names; rename the view layer or pass");
    channels.push_back(name);
  }
  out.channels = std::move(channels);
  return out;
}

BlenderRenderer::BlenderRenderer(BlenderSettings settings) : m_settings(std::move(settings)) {
  m_idle.push_back(start_blender(m_settings));
}

BlenderRenderer::~BlenderRenderer() = default;

int BlenderRenderer::carried_floats() const {
  return m_settings.job.pixels == BlenderPixels::layers && m_settings.channels.size() > 3
             ? static_cast<int>(m_settings.channels.size() - 3)
             : 0;
}

uint64_t BlenderRenderer::render(const Block& b, float* rgba, float* carried) {
  std::unique_ptr<BlenderProcess> process;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_idle.empty()) {
      process = std::move(m_idle.back());
      m_idle.pop_back();
    }
  }
  if (!process) process = start_blender(m_settings);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_busy.emplace_back(b, process.get());
  }
  struct Unlist {
    BlenderRenderer& r;
    BlenderProcess* p;
    ~Unlist() {
      std::lock_guard<std::mutex> lock(r.m_mutex);
      r.m_busy.erase(std::remove_if(r.m_busy.begin(), r.m_busy.end(), [&](const auto& e) { return e.second == p; }),
                     r.m_busy.end());
    }
  } unlist{*this, process.get()};
  blender_render(*process, m_settings, b.frame, b.x, b.y, b.width, b.height, rgba, carried);  // a dead one is dropped here
  std::lock_guard<std::mutex> lock(m_mutex);
  m_busy.erase(std::remove_if(m_busy.begin(), m_busy.end(), [&](const auto& e) { return e.second == process.get(); }),
               m_busy.end());
  // A cancel that landed just after Blender answered shut its socket: kept, it would fail the
  // next block it is given. It is dropped (killed) instead, and the next block starts a new one.
  if (!process->interrupted()) m_idle.push_back(std::move(process));
  return 0;
}

void BlenderRenderer::interrupt(const Block& block) {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& [b, process] : m_busy) {
    if (b == block) process->interrupt();
  }
}

void BlenderRenderer::interrupt_all() {
  std::lock_guard<std::mutex> lock(m_mutex);
  for (auto& busy : m_busy) busy.second->interrupt();
}

}  // namespace farm
