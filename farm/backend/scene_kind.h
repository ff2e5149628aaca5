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
// Blocks a worker renders at once per render thread with this kind's renderer: 1 for one that
// computes all the time; more for one whose processes mostly wait (POV-Ray), so that the CPU the
// worker was given stays busy. The worker runs that many; the master counts them as the worker's
// render slots, so that the policies size and queue work for what the worker really runs at once.
int renders_per_thread(SceneKind kind);

}  // namespace farm
