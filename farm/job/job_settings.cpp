#include "job/job_settings.h"

#include <cstdio>

#include "backend/blender_renderer.h"
#include "backend/povray_renderer.h"
#include "backend/scene_kind.h"

namespace farm {

proto::JobSettings job_settings(const rt::RenderSettings& s, const std::optional<std::string>& camera) {
  proto::JobSettings j;
  j.width = s.width;
  j.height = s.height;
  j.spp = s.spp;
  j.max_depth = s.max_depth;
  j.seed = s.seed;
  j.integrator = s.integrator;
  j.camera = camera;
  j.noise_threshold = s.noise_threshold;
  j.min_samples = s.min_samples;
  j.passes = s.passes;
  if (s.passes) j.channels = rt::layered_channel_names(s.passes);  // the alpha, then the passes
  return j;
}

proto::JobSettings job_settings(const rt::SceneDesc& desc, const std::optional<std::string>& camera,
                                const std::string& scene_path, const std::string& renderer_options) {
  proto::JobSettings j = job_settings(desc.settings, camera);
  switch (scene_kind(scene_path)) {
    case SceneKind::povray:
      j.renderer_kind = proto::RendererKind::povray;
      j.renderer = povray_version();
      j.renderer_options = povray_options(renderer_options);
      break;
    case SceneKind::blender:
      j.renderer_kind = proto::RendererKind::blender;
      j.renderer = blender_version();
      j.renderer_options = desc.backend_options;
      j.channels = desc.output_channels;
      break;
    case SceneKind::native:
      j.renderer_kind = proto::RendererKind::native;
      break;
  }
  return j;
}

SceneKind scene_kind_of(const proto::JobSettings& settings) {
  switch (settings.renderer_kind) {
    case proto::RendererKind::povray: return SceneKind::povray;
    case proto::RendererKind::blender: return SceneKind::blender;
    case proto::RendererKind::native: break;
  }
  return SceneKind::native;
}

void apply_job_settings(rt::SceneDesc& desc, const proto::JobSettings& j) {
  // The camera first: a glTF camera may bring its own aspect ratio, which the explicit size overrides.
  if (j.camera) rt::use_camera(desc, *j.camera);
  rt::RenderSettings& s = desc.settings;
  s.width = j.width;
  s.height = j.height;
  s.spp = j.spp;
  s.max_depth = j.max_depth;
  s.seed = j.seed;
  s.integrator = j.integrator;
  s.noise_threshold = j.noise_threshold;
  s.min_samples = j.min_samples;
  s.passes = j.passes;
}

std::vector<std::string> job_settings_lines(const proto::JobSettings& j) {
  std::vector<std::string> lines = {"width=" + std::to_string(j.width), "height=" + std::to_string(j.height),
                                    "spp=" + std::to_string(j.spp), "max_depth=" + std::to_string(j.max_depth),
                                    "seed=" + std::to_string(j.seed),
                                    std::string("integrator=") + rt::integrator_name(j.integrator)};
  if (j.camera) lines.push_back("camera=" + *j.camera);
  // Only when on: the identity of a job without adaptive sampling is what it was before it existed.
  if (j.noise_threshold > 0) {
    char threshold[32];
    std::snprintf(threshold, sizeof threshold, "%.9g", static_cast<double>(j.noise_threshold));
    lines.push_back(std::string("noise_threshold=") + threshold);
    lines.push_back("min_samples=" + std::to_string(j.min_samples));
  }
  // Likewise only when asked for. The channels' names, '|'-separated (a .blend's names never hold one:
  // job_spec.cpp), give how many floats each block's pixels carry (identity_image).
  if (j.passes) lines.push_back("passes=" + rt::pass_list_text(j.passes));
  if (!j.channels.empty()) {
    std::string joined;
    for (const std::string& c : j.channels) joined += (joined.empty() ? "" : "|") + c;
    lines.push_back("channels=" + joined);
  }
  if (j.renderer) lines.push_back("renderer=" + *j.renderer);
  if (!j.renderer_options.empty()) {
    std::string joined;
    for (const std::string& o : j.renderer_options) joined += (joined.empty() ? "" : " ") + o;
    lines.push_back("renderer_options=" + joined);
  }
  return lines;
}

}  // namespace farm
