// Limits shared by several layers, each in one place: the CLI's ranges, the protocol's decoder,
// the host and cluster files all read them from here (docs/architecture.md, Constants with one
// home). Image and render-setting limits are the renderer's (renderer/scene/render_settings.h);
// the block side is the scheduler's (scheduler/block.h).
#pragma once

namespace farm {

// Render threads of one worker, or one node of a simulated cluster.
inline constexpr int k_max_threads = 4096;

}  // namespace farm
