// Scenes of another renderer whose pixels depend on the region or the order that renderer
// renders them in (POV-Ray's radiosity, crand, jittered area lights, ...: povray_scene.h;
// Blender's Freestyle: blender_bridge.py) are
// rendered a whole frame at a time, by one process on one thread, in the farm as in `farm
// single`: each frame is then one block, and the farm spreads an animation's frames over its
// workers instead of a frame's blocks. The scene's description lists why
// (rt::SceneDesc::whole_frame_reasons).
#pragma once

#include <string>
#include <vector>

namespace farm {

// The scheduler grid that makes every block of a width x height frame the whole frame.
int whole_frame_grid(int width, int height);

// Throws rt::SceneError, naming the first reason, when a frame is larger than one block may be
// (k_max_block_side a side): such a scene is refused by `farm single` and `farm render` alike.
void check_whole_frame_size(const std::string& scene, const std::vector<std::string>& reasons, int width, int height);

// "each frame is rendered whole, as one block, by one povray on one thread (the farm spreads
// frames, not blocks), because: REASON; REASON": the line the master and `farm single` log.
std::string whole_frame_notice(const std::string& renderer, const std::vector<std::string>& reasons);

}  // namespace farm
