// The master's list of files a job needs, so workers without a shared file system can get
// them: the scene file first, then every asset it references, each with a content hash and
// the relative name under which the worker must place it for the scene to find it.
#pragma once

#include <string>
#include <vector>

#include "protocol/protocol.h"
#include "scene/scene_desc.h"

namespace farm {

struct ManifestEntry {
  proto::AssetRef ref;   // hash, relative name, size
  std::string path;      // where the master reads it
};

// Throws std::runtime_error if a file cannot be read or lies outside every search folder
// (an absolute path the worker could not reproduce).
std::vector<ManifestEntry> build_manifest(const std::string& scene_path, const rt::SceneDesc& desc,
                                          const rt::AssetSearch& search);

// True if `name` is a safe relative path: not empty, not absolute, no "..", no NUL.
bool is_safe_relative_name(const std::string& name);

}  // namespace farm
