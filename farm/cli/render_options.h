// The command-line options of every command that renders a scene, bound onto the job layer's
// RenderOptions (job/job_spec.h).
#pragma once

#include <CLI/CLI.hpp>

#include "job/job_spec.h"

namespace farm {

// Registers SCENE, -o (unless `with_output` is false), --assets, --width, --height, --spp,
// --frame, --max-depth, --integrator, --seed, --camera and --texture-cache on `cmd`.
void add_render_options(CLI::App& cmd, RenderOptions& options, bool with_output = true);

}  // namespace farm
