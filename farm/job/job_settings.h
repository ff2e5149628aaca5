// The job's effective render settings as they travel to workers (proto::JobSettings): made
// once by the master from the loaded scene and the command line, applied by every worker to
// the shipped scene file, and written into the job's identity.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "protocol/protocol.h"
#include "scene/scene_desc.h"

namespace farm {

proto::JobSettings job_settings(const rt::RenderSettings& settings, const std::optional<std::string>& camera);

// Makes `desc` render exactly the master's job. Throws rt::SceneError if the camera is unknown.
void apply_job_settings(rt::SceneDesc& desc, const proto::JobSettings& settings);

// "key=value" lines, the wording of the job identity and of journals (job/job_identity.h).
std::vector<std::string> job_settings_lines(const proto::JobSettings& settings);

}  // namespace farm
