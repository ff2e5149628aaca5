// The job's effective render settings as they travel to workers (proto::JobSettings): made
// once by the master from the loaded scene and the command line, applied by every worker to
// the shipped scene file, and written into the job's identity.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/scene_kind.h"
#include "protocol/protocol.h"
#include "scene/scene_desc.h"

namespace farm {

proto::JobSettings job_settings(const rt::RenderSettings& settings, const std::optional<std::string>& camera);

// The same for the scene at `scene_path`: its renderer's kind (scene_kind(), the one place the
// kind is read off a name), and for a scene of another renderer that renderer's version (this
// machine's) and the checked options (a .blend's: those settled when reading it,
// desc.backend_options). Throws if the renderer is missing.
proto::JobSettings job_settings(const rt::SceneDesc& desc, const std::optional<std::string>& camera,
                                const std::string& scene_path, const std::string& renderer_options);

// The renderer kind the job's settings name (what a worker follows).
SceneKind scene_kind_of(const proto::JobSettings& settings);

// Makes `desc` render exactly the master's job. Throws rt::SceneError if the camera is unknown.
void apply_job_settings(rt::SceneDesc& desc, const proto::JobSettings& settings);

// "key=value" lines, the wording of the job identity and of journals (job/job_identity.h).
std::vector<std::string> job_settings_lines(const proto::JobSettings& settings);

}  // namespace farm
