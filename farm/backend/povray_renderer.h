// POV-Ray behind the seam: Debian's `povray` run once per block on the region of the block
// (+SR +ER +SC +EC), its 8-bit PNG read back and cropped. POV-Ray anti-aliases block by block
// with its own internal blocks counted from the region's start, so a region that starts off
// its grid renders other pixels than the full frame (43 of chess2's 160x120 differed): the
// renderer runs with +BS equal to the grid and the scheduler carves only on that grid
// (k_povray_grid, or the job's own +BS), which makes every region byte-identical to the same
// pixels of a full-frame render.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "backend/block_renderer.h"
#include "backend/running_processes.h"
#include "backend/sandbox.h"

namespace farm {

// Block origins and sides are multiples of this (except where the image ends). POV-Ray's own
// default +BS: the farm's image is then a plain `povray` run's, and a smaller internal block
// costs CPU on every pixel (chess2 960x720 +A0.3, full frame: 122.8 CPU-s with +BS4, 105.7
// with +BS8, 93.5 with +BS32; results/bench_povray_costs.md). A block smaller than 32x32 would
// be mostly povray's start-up anyway.
constexpr int k_povray_grid = 32;
// POV-Ray's own default size (Debian's /etc/povray/3.7/povray.ini) when none is given.
constexpr int k_povray_default_width = 800, k_povray_default_height = 600;
// povray processes per render thread of a worker. A povray run spends most of its wall time in
// its front end's fixed 50 ms waits, not computing: one 16x16 block of chess2 took 0.65 s of
// wall time and 0.02 s of CPU, and 8 at once 0.77 s (docs/povray.md, Cost of a block).
constexpr int k_povray_renders_per_thread = 4;
// A POV-Ray job's policy when the user chose none: fixed blocks, the largest of 128, 64 and 32
// (never below the grid) that still cuts the image into k_povray_min_blocks blocks: every block
// is a povray start (~70 ms of CPU beyond its pixels), but too few blocks leave slow workers with
// the tail. Measured: chess2 960x720 +A0.3, 2 workers of 1 thread: fixed 128 (48 blocks) 0.91 of
// `farm single --threads 2`'s speed, 64 0.80, factoring 0.68, seed 0.49
// (results/bench_povray_costs.md); chess2 320x240 on the paper6 and hetero4 clusters: fixed 32 (80
// blocks) 24.5 s and 35.8 s, 64 44.2 and 47.3, 128 51.9 and 46.9 (results/REPORT.md).
constexpr int k_povray_min_blocks = 48;
int povray_default_block(int width, int height, int grid);

struct PovraySettings {
  std::string scene_path;  // the .pov file; povray runs in its folder
  int width = k_povray_default_width, height = k_povray_default_height;
  std::vector<std::string> options;  // the job's POV-Ray switches (+A0.3, +R3, ...), checked
  int threads = 1;                   // +WT: each block is one single-threaded process
  RendererLimits limits;             // each povray run's memory and time
  std::vector<std::string> readable;  // folders besides the scene's that povray may read (asset folders)
};

// "POV-Ray 3.7.0.10.unofficial", from `povray --version`; throws std::runtime_error naming
// what to install when there is no povray.
std::string povray_version();

// Splits and checks the user's POV-Ray switches: those the farm sets itself (size, region,
// output, display, threads, block size, animation) are refused, naming the switch. Throws
// std::invalid_argument.
std::vector<std::string> povray_options(const std::string& text);

// The grid blocks must keep to: the +BS the options give (+BS32, POV-Ray's own default, makes
// the image equal a plain `povray` run), else k_povray_grid.
int povray_grid(const std::vector<std::string>& options);

// An animation's frames from the options: +KFI (first, default 1) and +KFF (last); without +KFF
// one frame. Farm frame f is POV-Ray's frame first + f - 1. Throws std::invalid_argument.
struct PovrayFrames {
  int first = 1, last = 1;
  bool animated = false;  // +KFF given: POV-Ray renders frame by frame (+SF/+EF), clock from +KI/+KF
  int count() const { return last - first + 1; }
};
PovrayFrames povray_frames(const std::vector<std::string>& options);

// Renders `rect` (x, y, width, height; or the whole image) of farm frame `frame` into linear
// float RGBA. A parse error is an rt::SceneError with POV-Ray's message; other failures (a run
// past the time limit among them) std::runtime_error. povray runs confined (sandbox.h): the
// scene's folder and POV-Ray's library read-only, a scratch folder of its own for its image.
// With `running`, the povray process is listed there while it runs (so that it can be stopped).
void povray_render(const PovraySettings& s, int frame, int x, int y, int width, int height, float* rgba,
                   RunningProcesses* running = nullptr);

class PovrayRenderer : public BlockRenderer {
 public:
  // Parses the scene once (a 4x4 region) so that a bad scene fails the load, not every block.
  explicit PovrayRenderer(PovraySettings settings);
  uint64_t render(const Block& block, float* rgba, float* carried) override;
  void interrupt(const Block& block) override;
  void interrupt_all() override;
  double seconds_per_block() const override { return m_seconds_per_block; }

 private:
  PovraySettings m_settings;
  RunningProcesses m_running;
  double m_seconds_per_block = 0;  // the probe's wall time: a povray run of 16 pixels is nearly all start-up
};

}  // namespace farm
