// What a finished job writes besides its images, each if asked for: the tile map, the run
// statistics (--stats JSON) and the cost map learned from the blocks' render times.
#pragma once

#include <string>
#include <vector>

#include "control/job_controller.h"
#include "master/frame_store.h"
#include "master/master_options.h"

namespace farm {

// Before any work: throws std::invalid_argument naming an output that cannot be written
// (format, folder) of the image, tile map, statistics, cost map, trace or journal.
// Each file is also probed (base/file_checks.h, the probe `single` uses too): the refusal names the path and the OS reason.
void check_job_output_paths(const MasterOptions& o);
// Each frame's image of an animation, probed likewise once the frames are known: their folder
// once, then each name (a stat each: 100000 frames took seconds a probe file each, deaf to
// Ctrl-C). False if the stop flag was raised meanwhile.
bool check_frame_outputs(const MasterOptions& o, const std::vector<int>& frames);

// The journal's path: --journal, or the image's path + ".journal".
std::string job_journal_path(const MasterOptions& o);

// `extra_stats` are more top-level members for the statistics, already JSON (json_field).
// Tries every output even when one fails; each failure is logged as an error with its reason.
// Returns false if any was not written (the images are written, but not all it was asked).
bool write_job_outputs(const MasterOptions& o, const rt::RenderSettings& settings, const std::vector<int>& frames,
                       const FrameStore& store, const JobController& job, double makespan,
                       const std::vector<std::string>& extra_stats);

}  // namespace farm
