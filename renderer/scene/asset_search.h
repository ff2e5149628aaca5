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

// The one rule for where a scene's files may lie, shared by the renderer's loaders and the
// master's asset manifest (farm/assets): inside one of `roots` (asset_search_dirs: the scene's
// folder, --assets, $FARM_ASSETS), judged on the absolute, lexically normal path. Returns the
// path's name relative to the first root that holds it, or nothing if it lies outside them all.
// A symbolic link counts as outside unless what it leads to lies under a root too.
std::optional<std::string> name_under_roots(const std::string& path, const std::vector<std::string>& roots);

// Why name_under_roots refuses `path` ("outside the scene's folder and every asset folder
// (--assets, FARM_ASSETS)", or "a symbolic link to '/x', outside ..."), or "" if it does not.
std::string outside_roots_reason(const std::string& path, const std::vector<std::string>& roots);

}  // namespace rt
