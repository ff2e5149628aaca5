#include "cli/single_command.h"
#include "base/limits.h"
#include "cli/option_checks.h"

#include <spdlog/spdlog.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <iostream>
#include <optional>
#include <thread>
#include <unistd.h>

#include "backend/native_renderer.h"
#include "backend/blender_process.h"
#include "backend/blender_renderer.h"
#include "backend/povray_renderer.h"
#include "backend/renderer_process.h"
#include "backend/sandbox.h"
#include "backend/scene_kind.h"
#include "backend/whole_frame.h"
#include "base/file_checks.h"
#include "base/file_write.h"
#include "base/memory.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "cli/run_report.h"
#include "image/image_io.h"
#include "render/render.h"
#include "world/scene.h"
#include "costs/cost_map_render.h"
#include "job/job_settings.h"

namespace farm {

namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// The whole frame in linear float RGBA, or OutOfMemory saying so (a 16384x16384 frame is 4 GiB).
void allocate_frame(std::vector<float>& framebuffer, int width, int height) {
  allocate_filled(framebuffer, static_cast<size_t>(width) * height * 4, 0.0f, "the " + image_size_text(width, height) + " frame",
                  "float RGBA");
}

// The channels of the job's output file (proto::JobSettings::channels: the colour's R, G, B,
// then those each pixel carries after them); empty for the colour alone.
std::vector<std::string> output_channels(const SingleOptions& o, const rt::SceneDesc& desc) {
  return job_settings(desc, std::nullopt, o.render.scene_path, o.render.renderer_options).channels;
}

// Writes a frame: the colour alone, or with `channels` one multi-layer EXR of the colour's R, G,
// B and the `carried` floats (channels.size() - 3 per pixel) after them, as the farm's master does.
void write_frame(const std::string& path, int width, int height, const rt::SceneDesc& desc,
                 const std::vector<std::string>& channels, const std::vector<float>& rgba,
                 const std::vector<float>& carried) {
  if (channels.empty()) return rt::write_image(path, width, height, rgba.data());
  const size_t stride = channels.size(), k = stride - 3, pixels = static_cast<size_t>(width) * height;
  std::vector<float> layered;
  allocate_filled(layered, pixels * stride, 0.0f, "the " + image_size_text(width, height) + " frame's channels",
                  "float channels");
  for (size_t i = 0; i < pixels; ++i) {
    std::copy_n(&rgba[4 * i], 3, &layered[stride * i]);
    std::copy_n(&carried[k * i], k, &layered[stride * i + 3]);
  }
  rt::write_exr_channels(path, width, height, layered.data(), channels, desc.output_attributes);
}

// Ctrl-C or SIGTERM while `single` runs: every renderer process it started is ended (their
// waits return, the render fails and unwinds, and their scratch folders go with it), and the
// command exits 1 as every command does when stopped. Our own renderer has no process to end
// and writes nothing temporary: once it renders, a stop exits 1 at once.
class StopWatch {
 public:
  StopWatch() : m_stop(install_stop_flag()) {
    m_thread = std::thread([this] {
      while (!m_done.load()) {
        if (m_stop->load()) {
          if (m_exit_at_once.load()) {
            spdlog::error("stopped by a signal: nothing more is written");
            std::fflush(nullptr);
            ::_exit(k_exit_failure);
          }
          kill_all_renderers();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~StopWatch() {
    m_done = true;
    m_thread.join();
  }
  void exit_at_once() { m_exit_at_once = true; }
  bool stopped() const { return m_stop->load(); }

 private:
  const std::atomic<bool>* m_stop;
  std::atomic<bool> m_done{false}, m_exit_at_once{false};
  std::thread m_thread;
};

int stopped_by_signal() {
  spdlog::error("stopped by a signal: the renderer was ended, nothing more is written");
  return k_exit_failure;
}

// Renders every frame into `framebuffer`, writing each to its file; with a cost map, tile by
// tile with every tile's cost measured (same pixels). Returns the wall seconds of rendering.
double render_frames(const SingleOptions& o, const rt::Scene& scene, const std::vector<int>& frames,
                     std::vector<float>& framebuffer, CostMap* costs, rt::RayCounts& rays) {
  const rt::RenderSettings& s = scene.desc.settings;
  const size_t pixels = static_cast<size_t>(s.width) * s.height;
  const int k = rt::pass_channel_count(s.passes);
  std::vector<float> passes, carried;
  if (k) {
    allocate_filled(passes, pixels * k, 0.0f, "the " + image_size_text(s.width, s.height) + " frame's passes",
                    "float channels");
    allocate_filled(carried, pixels * (k + 1), 0.0f, "the " + image_size_text(s.width, s.height) + " frame's channels",
                    "float channels");
  }
  const std::vector<std::string> channels = output_channels(o, scene.desc);
  double render_seconds = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto t0 = Clock::now();
    if (costs) {
      render_frame_with_costs(scene, frames[i], framebuffer.data(), *costs, static_cast<int>(i) + 1, &rays,
                              s.passes ? passes.data() : nullptr);
    } else {
      rt::render_rect(scene, frames[i], {0, 0, s.width, s.height}, framebuffer.data(), &rays,
                      s.passes ? passes.data() : nullptr);
    }
    render_seconds += seconds(t0, Clock::now());
    std::string out = output_path_for_frame(o.render.output_path, frames[i], frames.size() > 1);
    if (k) carry_alpha_and_passes(framebuffer.data(), passes.data(), k, pixels, carried.data());
    write_frame(out, s.width, s.height, scene.desc, channels, framebuffer, carried);
    spdlog::info("wrote {}", out);
  }
  return render_seconds;
}

// Provenance kept in the cost map file: enough to know what the seconds are seconds of.
std::string cost_map_note(const SingleOptions& o, const rt::RenderSettings& s, const std::vector<int>& frames,
                          int threads) {
  std::string note = "farm single " + o.render.scene_path + " " + std::to_string(s.width) + "x" +
                     std::to_string(s.height) + " spp " + std::to_string(s.spp) + " threads " + std::to_string(threads);
  if (frames.size() == 1) note += " frame " + std::to_string(frames.front());
  return note + "; thread CPU seconds per tile";
}

// One more line of the statistics, aligned like print_report's.
void print_cost_map_line(std::ostream& out, const std::string& path, const CostMap& costs) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-26s ", "Cost map");
  out << buf << path;
  std::snprintf(buf, sizeof buf, " (%d x %d tiles of %d px%s, total %.3f s)\n", costs.columns(), costs.rows(), costs.tile(),
                costs.frames() > 1 ? (", " + std::to_string(costs.frames()) + " frames").c_str() : "", costs.total());
  out << buf;
}

// Every file the run will write must be writable now, not after the render: a read-only
// folder or file system would otherwise cost the whole render (docs/failures.md).
void check_outputs_writable(const SingleOptions& o, const std::vector<int>& frames) {
  auto require = [](const Status& status) {
    if (!status.ok()) throw std::invalid_argument(status.message());
  };
  for (int frame : frames) {
    require(probe_writable(output_path_for_frame(o.render.output_path, frame, frames.size() > 1), "output image"));
  }
  if (!o.stats_path.empty()) require(probe_writable(o.stats_path, "statistics file"));
  if (!o.cost_map_path.empty()) require(probe_writable(o.cost_map_path, "cost map"));
}

// A whole frame of another renderer's scene, into linear float RGBA of the job's size.
// Renders a frame into RGBA and, for a multi-layer output, its other channels into `carried`.
using FrameRenderer = std::function<void(int frame, float* rgba, float* carried)>;

// A scene of another renderer (.pov, .blend): that renderer renders each whole frame itself, as
// it would run by hand with the same settings; this is the image the farm's blocks must equal.
// `set_up` checks the options and returns the frame renderer and its name (the report's
// "integrator"); a scene the renderer finds bad is rt::SceneError (exit 2).
int run_single_backend(const SingleOptions& o, const rt::SceneDesc& desc, const std::vector<std::string>& whole_frame_reasons,
                       const std::vector<int>& frames, Clock::time_point t_start, Clock::time_point t_parsed,
                       const StopWatch& stop_watch,
                       const std::function<FrameRenderer(int threads, std::string& name)>& set_up) {
  int threads = o.threads > 0 ? o.threads : tbb::info::default_concurrency();
  if (!whole_frame_reasons.empty()) {
    // The farm's workers render such a frame on one thread: so does single (the same image).
    threads = 1;
    spdlog::info("{}", whole_frame_notice(scene_kind(o.render.scene_path) == SceneKind::povray ? "povray" : "Blender",
                                          whole_frame_reasons));
  }
  RunReport report;
  report.command = "single";
  const int width = desc.settings.width, height = desc.settings.height;
  FrameRenderer render_frame;
  const auto stopped = stopped_by_signal;
  try {
    if (!o.cost_map_path.empty()) throw std::invalid_argument("--cost-map is not available for POV-Ray and Blender scenes yet");
    if (std::string why = renderer_refusal(); !why.empty()) throw std::runtime_error(why);
    render_frame = set_up(threads, report.integrator);
  } catch (const std::exception& e) {
    if (stop_watch.stopped()) return stopped();
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));  // a bad scene or option; a renderer that cannot start
  }
  std::vector<float> framebuffer, carried;
  const std::vector<std::string> channels = output_channels(o, desc);
  try {
    allocate_frame(framebuffer, width, height);
    if (!channels.empty()) {
      allocate_filled(carried, static_cast<size_t>(width) * height * (channels.size() - 3), 0.0f,
                      "the " + image_size_text(width, height) + " frame's channels", "float channels");
    }
  } catch (const OutOfMemory& e) {
    spdlog::error("{}", e.what());
    return k_exit_failure;
  }
  for (int frame : frames) {
    const auto t0 = Clock::now();
    try {
      render_frame(frame, framebuffer.data(), carried.empty() ? nullptr : carried.data());
    } catch (const rt::SceneError& e) {
      if (stop_watch.stopped()) return stopped();
      spdlog::error("{}", e.what());
      return k_exit_bad_input;
    } catch (const std::exception& e) {
      if (stop_watch.stopped()) return stopped();
      spdlog::error("{}: {}", o.render.scene_path, error_text(e));
      return k_exit_failure;
    }
    if (stop_watch.stopped()) return stopped();
    report.render_seconds += seconds(t0, Clock::now());
    const std::string out = output_path_for_frame(o.render.output_path, frame, frames.size() > 1);
    try {
      write_frame(out, width, height, desc, channels, framebuffer, carried);
      spdlog::info("wrote {}", out);
    } catch (const std::exception& e) {
      spdlog::error("{}", error_text(e));
      return k_exit_failure;
    }
  }
  report.scene = o.render.scene_path;
  report.output = o.render.output_path;
  report.width = width;
  report.height = height;
  report.spp = desc.settings.spp;
  report.frames = static_cast<int>(frames.size());
  report.threads = threads;
  report.pixels = static_cast<uint64_t>(width) * height * frames.size();
  report.parse_seconds = seconds(t_start, t_parsed);
  report.total_seconds = seconds(t_start, Clock::now());
  report.peak_rss_bytes = peak_rss_bytes();
  print_report(std::cout, report);
  if (!o.stats_path.empty()) {
    if (Status st = write_file_replacing(o.stats_path, report_json(report), "statistics file"); !st.ok()) {
      spdlog::error("{}", st.message());
      return k_exit_failure;
    }
  }
  return k_exit_ok;
}

// POV-Ray renders the frame with +WT threads, as `povray` run by hand with the same switches.
FrameRenderer povray_frame_renderer(const SingleOptions& o, const rt::SceneDesc& desc, int threads, std::string& name) {
  PovraySettings p;
  p.scene_path = o.render.scene_path;
  p.width = desc.settings.width;
  p.height = desc.settings.height;
  p.options = povray_options(o.render.renderer_options);
  p.threads = threads;
  p.limits = {o.render.renderer_memory_mib, o.render.renderer_seconds};
  p.readable = o.render.asset_dirs;
  name = povray_version();
  return [p](int frame, float* rgba, float*) { povray_render(p, frame, 0, 0, p.width, p.height, rgba); };
}

// One Blender renders every frame whole with `threads` Cycles threads, through the same bridge
// and settings as the farm's workers (blender_bridge.py).
FrameRenderer blender_frame_renderer(const SingleOptions& o, const rt::SceneDesc& desc, int threads, std::string& name) {
  BlenderSettings b;
  b.scene_path = o.render.scene_path;
  b.width = desc.settings.width;
  b.height = desc.settings.height;
  b.samples = desc.settings.spp;
  b.camera = o.render.camera;
  b.job = parse_blender_options(desc.backend_options);
  b.channels = desc.output_channels;
  b.threads = threads;
  b.limits = {o.render.renderer_memory_mib, o.render.renderer_seconds};
  name = blender_version();
  std::shared_ptr<BlenderProcess> process = start_blender(b);
  return [b, process](int frame, float* rgba, float* carried) {
    blender_render(*process, b, frame, 0, 0, b.width, b.height, rgba, carried);
  };
}

}  // namespace

void add_single_command(CLI::App& app, SingleOptions& o) {
  CLI::App* cmd = app.add_subcommand("single", "Render a scene on this machine only (the speedup baseline)");
  add_render_options(*cmd, o.render);
  cmd->add_option("--threads", o.threads, "Render threads (default: all cores)")->transform(in_range(0, k_max_threads));
  cmd->add_option("--stats", o.stats_path, "Write run statistics as JSON to this file");
  cmd->add_option("--cost-map", o.cost_map_path,
                  "Render tile by tile and write every tile's measured render cost (seconds) to this file");
  cmd->add_option("--cost-tile", o.cost_tile, "Tile size of --cost-map in pixels")->transform(in_range(1, CostMap::k_max_tile));
}

int run_single(const SingleOptions& o) {
  const auto t_start = Clock::now();
  RunReport report;
  report.command = "single";
  rt::SceneDesc desc;
  std::vector<std::string> whole_frame_reasons;  // a .pov or .blend whose frames are rendered whole
  std::vector<int> frames;
  std::optional<CostMap> costs;
  StopWatch stop_watch;  // from here: even the look at a .blend runs a Blender
  try {
    check_output_path(o.render.output_path);  // the image format
    desc = load_scene_desc(o.render, whole_frame_reasons);
    frames = frames_to_render(o.render, desc);
    check_outputs_writable(o, frames);
    if (!o.cost_map_path.empty()) {
      costs.emplace(desc.settings.width, desc.settings.height, o.cost_tile, static_cast<int>(frames.size()));
    }
  } catch (const std::exception& e) {
    if (stop_watch.stopped()) return stopped_by_signal();
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));
  }
  if (stop_watch.stopped()) return stopped_by_signal();
  const auto t_parsed = Clock::now();
  switch (scene_kind(o.render.scene_path)) {
    case SceneKind::povray:
      return run_single_backend(o, desc, whole_frame_reasons, frames, t_start, t_parsed, stop_watch,
                                [&](int threads, std::string& name) { return povray_frame_renderer(o, desc, threads, name); });
    case SceneKind::blender:
      return run_single_backend(o, desc, whole_frame_reasons, frames, t_start, t_parsed, stop_watch,
                                [&](int threads, std::string& name) { return blender_frame_renderer(o, desc, threads, name); });
    case SceneKind::native:
      break;
  }

  const int threads = o.threads > 0 ? o.threads : tbb::info::default_concurrency();
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, threads);
  stop_watch.exit_at_once();

  std::unique_ptr<rt::Scene> scene;
  try {
    rt::LoadOptions load;
    load.embree_threads = threads;
    load.texture_cache_mb = o.render.texture_cache_mb;
    scene = rt::load_scene(desc, load);
    for (const std::string& notice : scene->notices) spdlog::warn("{}: {}", o.render.scene_path, notice);
  } catch (const rt::SceneError& e) {
    spdlog::error("{}", e.what());
    return k_exit_bad_input;
  } catch (const std::exception& e) {
    spdlog::error("loading the scene failed: {}", error_text(e));
    return k_exit_failure;
  }

  const rt::RenderSettings& s = desc.settings;
  std::vector<float> framebuffer;
  double render_seconds = 0;
  try {
    allocate_frame(framebuffer, s.width, s.height);
    render_seconds = render_frames(o, *scene, frames, framebuffer, costs ? &*costs : nullptr, report.rays);
    if (costs) {
      costs->note = cost_map_note(o, s, frames, threads);
      costs->write(o.cost_map_path);
      spdlog::info("wrote {}", o.cost_map_path);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return k_exit_failure;
  }

  report.scene = o.render.scene_path;
  report.output = o.render.output_path;
  report.width = s.width;
  report.height = s.height;
  report.spp = s.spp;
  report.frames = static_cast<int>(frames.size());
  report.threads = threads;
  report.integrator = rt::integrator_name(s.integrator);
  report.pixels = static_cast<uint64_t>(s.width) * s.height * frames.size();
  report.parse_seconds = seconds(t_start, t_parsed);
  report.scene_stats = scene->stats;
  report.load_seconds = scene->stats.load_seconds;
  report.bvh_seconds = scene->stats.bvh_seconds;
  report.render_seconds = render_seconds;
  report.total_seconds = seconds(t_start, Clock::now());
  report.peak_rss_bytes = peak_rss_bytes();
  print_report(std::cout, report);
  if (costs) print_cost_map_line(std::cout, o.cost_map_path, *costs);
  if (!o.stats_path.empty()) {
    if (Status st = write_file_replacing(o.stats_path, report_json(report), "statistics file"); !st.ok()) {
      spdlog::error("{}", st.message());
      return k_exit_failure;
    }
  }
  return k_exit_ok;
}

}  // namespace farm
