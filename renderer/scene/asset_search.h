// Finding the files a scene refers to (meshes, texture images, environment maps).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scene/scene_desc.h"

namespace rt {

// The folders a relative asset path is looked up in, in order: the scene file's folder,
// then `search.dirs`, then each entry of $FARM_ASSETS (colon-separated). All absolute and
// lexically normal; duplicates removed.
std::vector<std::string> asset_search_dirs(const std::string& scene_path, const AssetSearch& search);

// The absolute, lexically normal path of an existing regular file, or nothing. Absolute
// `path`s are used as they are; relative ones are tried in each of `dirs`.
std::optional<std::string> find_asset(const std::string& path, const std::vector<std::string>& dirs);

}  // namespace rt
