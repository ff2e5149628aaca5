// The renderer's public entry point: the pixels of any rectangle of any frame.
// A pixel's value depends only on (scene, settings, frame, x, y); any tiling, order or
// thread count gives byte-identical floats. This is the farm's test oracle.
#pragma once

#include <cstdint>

#include "integrators/ray_counts.h"
#include "world/scene.h"

namespace rt {

struct Rect {
  int x = 0, y = 0, width = 0, height = 0;
  int64_t pixel_count() const { return static_cast<int64_t>(width) * height; }
};

// Renders `rect` of `frame` (1..settings.frames) into `rgba`: rect.width * rect.height
// pixels, 4 floats each (linear RGB, alpha = 1), rows from the rectangle's top.
// With `passes` and settings.passes not empty, also the pixels' passes (scene/passes.h) into
// `passes`: pass_channel_count(settings.passes) floats per pixel, same order.
// Uses the calling thread's TBB arena for parallelism. Throws std::invalid_argument if the
// rectangle is not inside the image or the frame is out of range.
void render_rect(const Scene& scene, int frame, Rect rect, float* rgba, RayCounts* counts = nullptr,
                 float* passes = nullptr);

}  // namespace rt
