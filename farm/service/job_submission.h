// What `farm submit` sends a farm service and the service keeps in its queue (the spec column of
// queue/job_store.h): the job's name and priority, the scene and the files it needs by content
// hash, the output's file name, and the options of `farm render` that shape the image and its
// scheduling. Written and read here only, as JSON, so client and service agree by construction;
// the service reads a submission as untrusted input: every field is checked, and a bad one is
// named in the error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/job_dispatch.h"  // k_min_priority, k_max_priority
#include "assets/asset_manifest.h"
#include "master/master_options.h"
#include "protocol/protocol.h"

namespace farm {

struct JobSubmission {
  std::string name;                   // shown in listings (default: the scene's file name)
  int priority = 0;                   // higher first (k_min_priority..k_max_priority)
  bool paused = false;                // submitted paused: it waits for `farm resume`
  std::string scene;                  // the scene's relative name among `files`
  std::vector<proto::AssetRef> files;  // the scene first, then every file it needs
  std::string output;                 // the image's file name (its extension picks the format)
  RenderOptions render;               // the overrides (scene_path, output_path, asset_dirs unused)
  SchedulerConfig scheduling;         // policy, block, min block, wait, copies
  bool policy_chosen = false;
  bool compress = true;
  bool preview_costs = true;
};

inline constexpr size_t k_max_submission_files = 100000;

// The client's side: reads the scene as `farm render` would (a bad one is said before anything
// is sent; throws rt::SceneError, std::invalid_argument) and lists the files it needs in `files`;
// fills scene, output (the file name of render.output_path), the render overrides and the name
// (the scene's file name) of the submission. The caller sets the rest.
JobSubmission submission_for(const RenderOptions& render, std::vector<ManifestEntry>& files);

std::string submission_json(const JobSubmission& s);
// Throws std::invalid_argument naming the field that is missing, of the wrong type or out of range.
JobSubmission parse_submission(const std::string& json);

// The options a service serves the job with: the submission's, its scene at `scene_path`, the
// image written to `output_dir`/output, the journal at `journal_path`; `base` gives what the
// service decides for every job (heartbeats, liveness).
MasterOptions submission_master_options(const JobSubmission& s, const std::string& scene_path,
                                        const std::string& output_dir, const std::string& journal_path,
                                        const MasterOptions& base);

}  // namespace farm
