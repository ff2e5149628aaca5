// A job as the worker renders it: whether this worker may run the job's renderer (POV-Ray and
// Blender must be the master's version), then the job loaded behind the seam (farm/backend).
// The worker's I/O loop (worker.cpp) knows none of the backends.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/block_renderer.h"
#include "protocol/protocol.h"
#include "world/scene.h"

namespace farm {

// A job ready to render: the renderer behind the seam, and the image it renders.
struct LoadedJob {
  std::unique_ptr<rt::Scene> scene;  // ours; none for another renderer's scene
  std::unique_ptr<BlockRenderer> renderer;
  int width = 0, height = 0, frames = 1;
  int renders_per_thread = 1;  // blocks each render thread keeps in progress (backend/scene_kind.h)
};

// Why this worker does not take the job: its renderer is missing or another version (internal:
// it sits the job out, the others go on), or the master sent options this worker will not pass
// to a renderer (bad_message).
struct JobRefusal {
  std::string message;
  proto::ErrorCode code;
};

// Quick (a renderer's --version, once per process): run on the worker's I/O thread.
// The renderer is the one the settings name (proto::JobSettings::renderer_kind).
std::optional<JobRefusal> check_job_renderer(const proto::JobSettings& settings);

// Slow (meshes, BVH, a renderer's first process): run off the I/O thread. A bad scene throws
// rt::SceneError; anything else that goes wrong another std::exception.
std::unique_ptr<LoadedJob> load_job(const std::string& scene_path, const proto::JobSettings& settings, int embree_threads);

}  // namespace farm
