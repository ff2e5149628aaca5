// Which renderer a scene file is for, from its name: one rule for the master, the workers and
// `farm single`, so a job never reaches a worker that would read it another way.
#pragma once

#include <string>

namespace farm {

enum class SceneKind {
  native,  // TOML and glTF: the farm's own renderer (renderer/)
  povray,  // .pov: Debian's povray, run per block
  blender,  // .blend: Blender Cycles, one persistent process per render thread
};

SceneKind scene_kind(const std::string& scene_path);
const char* scene_kind_name(SceneKind kind);  // "native", "povray", "blender"
// Blocks a worker renders at once per render thread with this kind's renderer (its
// BlockRenderer::renders_per_thread): the master counts a worker's render slots with it, so that
// the policies size and queue work for what the worker really runs at once.
int renders_per_thread(SceneKind kind);

}  // namespace farm
