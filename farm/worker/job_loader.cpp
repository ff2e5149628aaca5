#include "worker/job_loader.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "backend/blender_renderer.h"
#include "backend/native_renderer.h"
#include "backend/povray_renderer.h"
#include "backend/sandbox.h"
#include "backend/scene_kind.h"
#include "job/job_settings.h"

namespace farm {

namespace {

// Another version may render other pixels: a worker whose renderer differs sits the job out.
std::optional<JobRefusal> check_version(const std::string& renderer, std::string (*version)(),
                                        const proto::JobSettings& settings) {
  std::string mine;
  try {
    mine = version();
  } catch (const std::exception& e) {
    return JobRefusal{"this worker cannot render " + renderer + " scenes: " + e.what(), proto::ErrorCode::internal};
  }
  if (settings.renderer != mine) {
    return JobRefusal{"this worker's " + renderer + " is '" + mine + "', the job's is '" + settings.renderer.value_or("none") +
                          "' (another version may render other pixels)",
                      proto::ErrorCode::internal};
  }
  return std::nullopt;
}

}  // namespace

std::optional<JobRefusal> check_job_renderer(const proto::JobSettings& settings) {
  switch (scene_kind_of(settings)) {
    case SceneKind::native:
      // Our renderer carries its passes (the alpha before them); any other channel list is not its.
      if (settings.channels != (settings.passes ? rt::layered_channel_names(settings.passes) : std::vector<std::string>{}))
        return JobRefusal{"the master sent channels that are not those of the job's passes", proto::ErrorCode::bad_message};
      return std::nullopt;
    case SceneKind::povray: {
      if (std::string why = renderer_refusal(); !why.empty()) return JobRefusal{why, proto::ErrorCode::internal};
      if (auto refused = check_version("POV-Ray", povray_version, settings)) return refused;
      // The options become povray's argv here: each must be one switch the master may send,
      // checked again (a master that sent "+O/elsewhere" would make povray write there).
      for (const std::string& option : settings.renderer_options) {
        std::vector<std::string> checked;
        try {
          checked = povray_options(option);
        } catch (const std::invalid_argument& e) {
          return JobRefusal{std::string("the master sent a POV-Ray option this worker does not run: ") + e.what(),
                            proto::ErrorCode::bad_message};
        }
        if (checked.size() != 1 || checked.front() != option) {
          return JobRefusal{"the master sent a POV-Ray option that is not one switch: '" + option + "'",
                            proto::ErrorCode::bad_message};
        }
      }
      try {
        povray_frames(settings.renderer_options);
      } catch (const std::invalid_argument& e) {
        return JobRefusal{std::string("the master sent POV-Ray frames this worker does not take: ") + e.what(),
                          proto::ErrorCode::bad_message};
      }
      return std::nullopt;
    }
    case SceneKind::blender: {
      if (std::string why = renderer_refusal(); !why.empty()) return JobRefusal{why, proto::ErrorCode::internal};
      if (auto refused = check_version("Blender", blender_version, settings)) return refused;
      try {
        // Only words the bridge's settings are made of; a multi-layer job names its channels, another none.
        if ((parse_blender_options(settings.renderer_options).pixels == BlenderPixels::layers) != !settings.channels.empty())
          return JobRefusal{"the master sent channels that do not go with its Blender pixels", proto::ErrorCode::bad_message};
      } catch (const std::invalid_argument& e) {
        return JobRefusal{std::string("the master sent a Blender option this worker does not take: ") + e.what(),
                          proto::ErrorCode::bad_message};
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::unique_ptr<LoadedJob> load_job(const std::string& scene_path, const proto::JobSettings& settings, int embree_threads) {
  auto loaded = std::make_unique<LoadedJob>();
  loaded->width = settings.width;
  loaded->height = settings.height;
  // The master's decision, as the job's settings carry it (never read off the file's name here).
  const SceneKind kind = scene_kind_of(settings);
  loaded->renders_per_thread = renders_per_thread(kind);
  switch (kind) {
    case SceneKind::povray: {
      PovraySettings p;
      p.scene_path = scene_path;
      p.width = settings.width;
      p.height = settings.height;
      p.options = settings.renderer_options;
      p.threads = 1;  // one process per block, several per render thread (renders_per_thread)
      p.limits = {settings.renderer_memory_mib, settings.renderer_seconds};
      loaded->renderer = std::make_unique<PovrayRenderer>(p);
      loaded->frames = povray_frames(p.options).count();
      break;
    }
    case SceneKind::blender: {
      BlenderSettings b;
      b.scene_path = scene_path;
      b.width = settings.width;
      b.height = settings.height;
      b.samples = settings.spp;
      b.camera = settings.camera;
      b.job = parse_blender_options(settings.renderer_options);
      b.channels = settings.channels;
      b.threads = 1;  // one Blender per render thread, each with a block
      b.limits = {settings.renderer_memory_mib, settings.renderer_seconds};
      loaded->renderer = std::make_unique<BlenderRenderer>(b);
      // The job's settings carry no frame count; the master's frames map onto the .blend's range.
      loaded->frames = std::numeric_limits<int>::max();
      break;
    }
    case SceneKind::native: {
      rt::AssetSearch search;  // only the job folder: the worker reads nothing but what it was sent
      rt::SceneDesc desc = rt::parse_scene_file(scene_path, search);
      apply_job_settings(desc, settings);
      rt::LoadOptions load;
      load.embree_threads = embree_threads;
      loaded->scene = rt::load_scene(desc, load);
      for (const std::string& notice : loaded->scene->notices) spdlog::warn("{}: {}", scene_path, notice);
      loaded->frames = loaded->scene->desc.settings.frames;
      loaded->renderer = std::make_unique<NativeRenderer>(*loaded->scene);
      break;
    }
  }
  return loaded;
}

}  // namespace farm
