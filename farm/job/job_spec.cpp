#include "job/job_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "backend/blender_renderer.h"
#include "backend/sandbox.h"
#include "backend/povray_renderer.h"
#include "backend/povray_scene.h"
#include "backend/scene_kind.h"
#include "backend/whole_frame.h"
#include "base/file_checks.h"
#include "image/image_io.h"
#include "protocol/protocol.h"
#include "scene/asset_search.h"

namespace farm {

// Keeps the camera's aspect ratio when only one side is given.
static void fit_aspect(const RenderOptions& o, const rt::SceneDesc& desc, rt::RenderSettings& s) {
  if (!(desc.camera_aspect > 0)) return;
  auto clamp_side = [](double v) { return static_cast<int>(std::clamp(std::lround(v), 1L, static_cast<long>(rt::k_max_image_side))); };
  if (o.width && !o.height) s.height = clamp_side(*o.width / desc.camera_aspect);
  if (o.height && !o.width) s.width = clamp_side(*o.height * desc.camera_aspect);
}

namespace {

// A .pov scene as the rest of the farm sees one: a size, one frame, the files to ship; and why
// its frames must be rendered whole, if they must.
rt::SceneDesc povray_scene_desc(const RenderOptions& o, std::vector<std::string>& whole_frame_reasons) {
  if (o.spp || o.max_depth || o.integrator || o.camera || o.seed || o.noise_threshold || o.min_samples || o.passes) {
    throw std::invalid_argument("--spp, --max-depth, --integrator, --camera, --seed, --noise-threshold, --min-samples and --passes "
                                "are the farm's own renderer's: a POV-Ray scene takes its options with "
                                "--renderer-options (e.g. '+A0.3 +R3')");
  }
  // Refused before any work, naming the switch; an animation's frames are POV-Ray's +KFI..+KFF.
  const PovrayFrames frames = povray_frames(povray_options(o.renderer_options));
  rt::AssetSearch search;
  search.dirs = o.asset_dirs;
  rt::SceneDesc desc;
  desc.path = o.scene_path;
  desc.settings.width = o.width.value_or(k_povray_default_width);
  desc.settings.height = o.height.value_or(k_povray_default_height);
  desc.settings.spp = 1;
  desc.settings.frames = frames.count();
  PovraySceneFiles found = povray_scene_files(o.scene_path, rt::asset_search_dirs(o.scene_path, search));
  for (const std::string& warning : found.warnings) spdlog::warn("{}", warning);
  desc.asset_files = std::move(found.files);
  whole_frame_reasons = std::move(found.whole_frame);
  return desc;
}

// A .blend scene as the rest of the farm sees one, from what Blender itself reports of it: size,
// samples and frames (the .blend's, or the overrides), the camera, and the files it reads; and
// why its frames must be rendered whole, if they must.
rt::SceneDesc blender_scene_desc(const RenderOptions& o, std::vector<std::string>& whole_frame_reasons) {
  if (o.noise_threshold || o.min_samples)
    throw std::invalid_argument("--noise-threshold and --min-samples are the farm's own renderer's: Cycles' adaptive "
                                "sampling reads neighbouring pixels, so the farm renders .blend scenes with it off "
                                "(docs/blender.md)");
  if (o.passes)
    throw std::invalid_argument("--passes is the farm's own renderer's: a .blend's passes are those its view layers "
                                "enable, written when its output format is OpenEXR MultiLayer and the output an .exr "
                                "(docs/blender.md)");
  if (o.max_depth || o.integrator || o.seed || !o.renderer_options.empty()) {
    throw std::invalid_argument("--max-depth, --integrator, --seed and --renderer-options are not taken for a Blender "
                                "scene: its settings come from the .blend (--width, --height, --spp, --frame and "
                                "--camera override them)");
  }
  // Blender parses the .blend to say what it holds: confined, as every renderer process.
  if (std::string why = renderer_refusal(); !why.empty()) throw std::runtime_error(why);
  const BlenderSceneInfo info = blender_scene_info(o.scene_path, {o.renderer_memory_mib, o.renderer_seconds});
  const std::string& name = o.scene_path;
  if (info.engine != "CYCLES") {
    throw rt::SceneError(name + ": the render engine is '" + info.engine + "'; the farm renders .blend scenes with "
                         "Cycles only (set Render Engine to Cycles in the .blend)");
  }
  if (info.multiview) throw rt::SceneError(name + ": stereoscopy / multi-view is on; the farm renders one view");
  if (!info.problems.empty()) throw rt::SceneError(name + ": " + info.problems.front());
  for (const std::string& why : info.whole_frame) whole_frame_reasons.push_back(name + ": " + why);
  std::optional<std::string> camera = o.camera;
  if (camera && std::find(info.cameras.begin(), info.cameras.end(), *camera) == info.cameras.end()) {
    std::string names;
    for (const std::string& c : info.cameras) names += (names.empty() ? "'" : ", '") + c + "'";
    throw std::invalid_argument("--camera '" + *camera + "': the scene has no camera of that name (cameras: " +
                                (names.empty() ? "none" : names) + ")");
  }
  if (!camera && info.camera.empty()) throw rt::SceneError(name + ": the scene has no camera (set one, or pass --camera)");
  if (info.frame_step < 1 || info.frame_end < info.frame_start) {
    throw rt::SceneError(name + ": the frame range " + std::to_string(info.frame_start) + ".." +
                         std::to_string(info.frame_end) + " step " + std::to_string(info.frame_step) + " is empty");
  }
  rt::SceneDesc desc;
  desc.path = o.scene_path;
  rt::RenderSettings& s = desc.settings;
  s.width = o.width.value_or(info.width);
  s.height = o.height.value_or(info.height);
  // One side given: the other keeps the .blend's aspect ratio.
  if (o.width && !o.height && info.width > 0) s.height = std::max(1, static_cast<int>(std::lround(double(*o.width) * info.height / info.width)));
  if (o.height && !o.width && info.height > 0) s.width = std::max(1, static_cast<int>(std::lround(double(*o.height) * info.width / info.height)));
  s.spp = o.spp.value_or(info.samples);
  // The limits a TOML scene's [render] table is read with, in its words: before anything probes
  // the frames' outputs (a range of a million frames took minutes) or a worker is sent a job it
  // must refuse. The frame count in 64 bits: a range over the whole int would overflow.
  const int64_t frames = (int64_t{info.frame_end} - info.frame_start) / info.frame_step + 1;
  if (std::string problem = rt::int_limit_problem("frames", frames, 1, rt::k_max_frames); !problem.empty()) {
    throw rt::SceneError(name + ": " + problem + " (the .blend's frames " + std::to_string(info.frame_start) + ".." +
                         std::to_string(info.frame_end) + " step " + std::to_string(info.frame_step) +
                         "; set a shorter frame range in the .blend)");
  }
  s.frames = static_cast<int>(frames);
  if (std::string problem = rt::render_settings_problem(s); !problem.empty()) {
    const bool samples = problem.rfind("'spp'", 0) == 0;
    throw rt::SceneError(name + ": " + problem + (samples ? " (the .blend's Cycles samples; --spp overrides them)"
                                                          : " (the .blend's output size; --width and --height override it)"));
  }
  BlenderJobOptions job;
  job.frame_start = info.frame_start;
  job.frame_step = info.frame_step;
  // 8-bit outputs hold Blender's own display values (its view transform); EXR its linear floats,
  // and every view layer's every pass when the .blend writes OpenEXR MultiLayer.
  const bool exr = rt::image_format_for(o.output_path.empty() ? "x.exr" : o.output_path) == rt::ImageFormat::exr;
  job.pixels = !exr ? BlenderPixels::display8 : info.multilayer ? BlenderPixels::layers : BlenderPixels::linear;
  if (info.multilayer && !exr) {
    spdlog::warn("{}: the .blend writes OpenEXR MultiLayer, but '{}' holds the Combined image only; write an .exr to "
                 "have every pass", name, o.output_path);
  }
  desc.backend_options = blender_option_words(job);
  // Every file Blender says it reads must be beside the .blend, where the workers' copies are
  // found through the same relative paths.
  const std::string folder = std::filesystem::absolute(o.scene_path).parent_path().string();
  for (const BlenderSceneInfo::File& f : info.files) {
    const std::string who = f.kind + " '" + f.name + "'";
    if (f.raw.rfind("//", 0) != 0 && f.kind != "path") {
      throw rt::SceneError(name + ": " + who + " reads '" + f.raw + "', an absolute path, which the workers would look "
                           "for on their own disks; make the .blend's paths relative (File > External Data > Make "
                           "Paths Relative) and keep the files beside it");
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f.path, ec)) {
      throw rt::SceneError(name + ": " + who + " reads '" + f.raw + "', which is not there ('" + f.path + "')");
    }
    if (!rt::name_under_roots(f.path, {folder})) {
      throw rt::SceneError(name + ": " + who + " reads '" + f.raw + "', outside the .blend's folder: the workers find "
                           "files only beside the .blend (keep them in its folder or below)");
    }
    if (std::find(desc.asset_files.begin(), desc.asset_files.end(), f.path) == desc.asset_files.end()) {
      desc.asset_files.push_back(f.path);
    }
  }
  // The channels a multi-layer job carries: known only from what Blender writes (a pixel's render).
  if (job.pixels == BlenderPixels::layers) {
    BlenderSettings probe;
    probe.scene_path = o.scene_path;
    probe.width = s.width;
    probe.height = s.height;
    probe.samples = 1;  // the channels do not depend on the samples
    probe.camera = camera;
    probe.job = job;
    probe.limits = {o.renderer_memory_mib, o.renderer_seconds};
    BlenderOutput output = blender_output(probe, info.view_layer);
    desc.output_channels = std::move(output.channels);
    desc.output_attributes = std::move(output.attributes);
    if (desc.output_channels.size() > proto::k_max_output_channels) {
      throw rt::SceneError(name + ": its view layers write " + std::to_string(desc.output_channels.size()) +
                           " channels; the farm carries at most " + std::to_string(proto::k_max_output_channels) +
                           " (turn off the passes or view layers the compositing does not need)");
    }
  }
  return desc;
}

}  // namespace

rt::SceneDesc load_scene_desc(const RenderOptions& o) {
  std::vector<std::string> whole_frame_reasons;
  return load_scene_desc(o, whole_frame_reasons);
}

rt::SceneDesc load_scene_desc(const RenderOptions& o, std::vector<std::string>& whole_frame_reasons) {
  whole_frame_reasons.clear();
  if (std::filesystem::path(o.scene_path).extension() == ".ini") {
    // Read as TOML it would fail with a baffling syntax error at 1:1; say what to do instead.
    throw rt::SceneError(o.scene_path + ": a POV-Ray .ini file is not a scene the farm reads: render the .pov it names "
                         "(Input_File_Name) and pass its settings with --renderer-options (e.g. Antialias=off is '-A', "
                         "Initial_Frame/Final_Frame are '+KFI1 +KFF4') and --width/--height (docs/povray.md)");
  }
  if (scene_kind(o.scene_path) != SceneKind::native) {
    if (Status regular = check_regular_file(o.scene_path, "scene file"); !regular.ok()) throw rt::SceneError(regular.message());
    rt::SceneDesc desc = scene_kind(o.scene_path) == SceneKind::povray ? povray_scene_desc(o, whole_frame_reasons)
                                                                        : blender_scene_desc(o, whole_frame_reasons);
    // A .blend's values are checked where they are read; a .pov's size is the command line's.
    if (std::string problem = rt::render_settings_problem(desc.settings); !problem.empty())
      throw std::invalid_argument(o.scene_path + ": " + problem + " (--width and --height)");
    check_whole_frame_size(o.scene_path, whole_frame_reasons, desc.settings.width, desc.settings.height);
    if (o.frame && *o.frame > desc.settings.frames) {
      throw std::invalid_argument("--frame " + std::to_string(*o.frame) + " but the scene has " +
                                  std::to_string(desc.settings.frames) + " frame(s)");
    }
    return desc;
  }
  if (!o.renderer_options.empty()) {
    throw std::invalid_argument("--renderer-options is for scenes of another renderer (.pov); '" + o.scene_path +
                                "' is the farm's own");
  }
  rt::AssetSearch search;
  search.dirs = o.asset_dirs;
  rt::SceneDesc desc = rt::parse_scene_file(o.scene_path, search);
  if (o.camera) rt::use_camera(desc, *o.camera);
  for (const std::string& notice : desc.notices) spdlog::warn("{}: {}", o.scene_path, notice);
  rt::RenderSettings& s = desc.settings;
  if (o.width) s.width = *o.width;
  if (o.height) s.height = *o.height;
  fit_aspect(o, desc, s);
  if (o.spp) s.spp = *o.spp;
  if (o.max_depth) s.max_depth = *o.max_depth;
  if (o.seed) s.seed = *o.seed;
  if (o.noise_threshold) s.noise_threshold = *o.noise_threshold;
  if (o.min_samples) s.min_samples = *o.min_samples;
  if (o.passes) {
    std::string error;
    std::optional<rt::PassSet> set = rt::parse_pass_list(*o.passes, error);
    if (!set) throw std::invalid_argument("--passes: " + error);
    s.passes = *set;
  }
  // An 8-bit image holds the beauty only: say so rather than drop the passes unseen.
  if (s.passes && !o.output_path.empty() && rt::image_format_for(o.output_path) != rt::ImageFormat::exr) {
    spdlog::warn("{}: the passes ({}) are not rendered: '{}' holds the image only; write an .exr to have them",
                 o.scene_path, rt::pass_list_text(s.passes), o.output_path);
    s.passes = 0;
  }
  if (o.integrator) {
    std::optional<rt::IntegratorKind> kind = rt::parse_integrator(*o.integrator);
    if (!kind) throw std::invalid_argument("unknown integrator '" + *o.integrator + "'; valid: whitted, path");
    s.integrator = *kind;
  }
  // The file's values were read within these limits; the overrides may still pass them together.
  if (std::string problem = rt::render_settings_problem(s); !problem.empty())
    throw std::invalid_argument(o.scene_path + ": " + problem + " (with --width and --height)");
  if (o.frame && *o.frame > s.frames) {
    throw std::invalid_argument("--frame " + std::to_string(*o.frame) + " but the scene has " +
                                std::to_string(s.frames) + " frame(s)");
  }
  return desc;
}

std::vector<int> frames_to_render(const RenderOptions& o, const rt::SceneDesc& desc) {
  if (o.frame) return {*o.frame};
  std::vector<int> frames;
  for (int f = 1; f <= desc.settings.frames; ++f) frames.push_back(f);
  return frames;
}

std::string output_path_for_frame(const std::string& path, int frame, bool numbered) {
  if (!numbered) return path;
  std::filesystem::path p(path);
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%04d", frame);
  return (p.parent_path() / (p.stem().string() + suffix + p.extension().string())).string();
}

std::string default_journal_path(const std::string& output_path) { return output_path + ".journal"; }

void check_output_path(const std::string& path) {
  rt::image_format_for(path);
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir)) {
    throw std::invalid_argument("output folder '" + dir.string() + "' does not exist");
  }
}

}  // namespace farm
