// `farm render --hosts FILE` and `farm render --slurm`: the master here, the workers started
// over ssh or srun with keys made for the job, and nothing left running afterwards.
#pragma once

#include <string>

#include "cli/farm_commands.h"

namespace farm {

int run_cluster_render(const RenderCommandOptions& o, const std::string& self_exe);

}  // namespace farm
