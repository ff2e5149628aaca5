// `farm master`: the ZeroMQ ROUTER event loop around one job. It ships the scene and its assets
// to workers, hands out blocks on request, assembles the results and writes the images,
// statistics and tile map.
#pragma once

#include "job/run_status.h"
#include "master/master_options.h"

namespace farm {

// Runs one job to completion: ok, failure (interrupted, no workers, cannot write) or bad_input
// (scene, options, keys or endpoint; nothing was done).
RunStatus run_master(const MasterOptions& options);

}  // namespace farm
