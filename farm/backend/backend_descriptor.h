// What the farm needs to know of a job's renderer, decided once per job by the master from the
// scene (its kind, backend/scene_kind.h) and the job's renderer options: the master plans the job
// with it, and its kind travels to the workers in the job's settings (proto::JobSettings::
// renderer_kind), so that no worker reads it off a file name again.
#pragma once

#include <string>
#include <vector>

#include "backend/scene_kind.h"

namespace farm {

struct BackendDescriptor {
  SceneKind kind = SceneKind::native;
  // Blocks a worker renders at once per render thread (renders_per_thread()).
  int renders_per_thread = 1;
  // Block edges fall on multiples of this (POV-Ray's +BS grid: every region then renders the
  // pixels of the full frame); 1: anywhere.
  int grid = 1;
  // A preview render can measure the job's block costs for the factoring policy (ours only).
  bool preview_costs = true;
};

// `renderer_options`: the job's options for the renderer, as the workers get them (POV-Ray's
// checked switches; unused for ours).
BackendDescriptor describe_backend(SceneKind kind, const std::vector<std::string>& renderer_options);

}  // namespace farm
