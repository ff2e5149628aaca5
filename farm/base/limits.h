// Limits shared by several layers, each in one place: the CLI's ranges, the protocol's decoder,
// the host and cluster files all read them from here (docs/architecture.md, Constants with one
// home). Image and render-setting limits are the renderer's (renderer/scene/render_settings.h);
// the block side is the scheduler's (scheduler/block.h).
#pragma once

namespace farm {

// Render threads of one worker, or one node of a simulated cluster.
inline constexpr int k_max_threads = 4096;

// A worker whose renderer failed this many blocks in a row sits the rest of the job out: a broken
// node (its renderer missing a library, its disk full) fails a block in milliseconds and would
// otherwise use up a block's tries while the healthy workers are busy. The master counts a
// worker's; a relay counts its site workers' (the master does not bench a whole relay).
inline constexpr int k_max_failures_in_row = 3;

// A block's reported render time at or above this (11.6 days), or below the minimum (a
// microsecond, under any block's real cost), is nonsense from a broken or hostile worker: it must
// not steer speeds or copy thresholds (a denormal time made a relay's speed infinite).
inline constexpr double k_max_render_seconds = 1e6;
inline constexpr double k_min_render_seconds = 1e-6;

// What a job may ask of each renderer process (POV-Ray, Blender; backend/sandbox.h has the
// defaults): memory in MiB (4 TiB), and seconds for one run (a week).
inline constexpr unsigned long long k_max_renderer_memory_mib = 1ull << 22;
inline constexpr unsigned k_max_renderer_seconds = 7 * 24 * 3600;

}  // namespace farm
