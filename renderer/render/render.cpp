#include "render/render.h"

#include <tbb/blocked_range2d.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <stdexcept>
#include <string>

#include "integrators/integrator.h"
#include "sampling/pixel_filter.h"

namespace rt {

RayCounts& RayCounts::operator+=(const RayCounts& o) {
  camera += o.camera;
  shadow += o.shadow;
  reflected += o.reflected;
  refracted += o.refracted;
  indirect += o.indirect;
  return *this;
}

void render_rect(const Scene& scene, int frame, Rect rect, float* rgba, RayCounts* counts) {
  const RenderSettings& settings = scene.desc.settings;
  if (rect.x < 0 || rect.y < 0 || rect.width <= 0 || rect.height <= 0 || rect.x + rect.width > settings.width ||
      rect.y + rect.height > settings.height) {
    throw std::invalid_argument("rectangle " + std::to_string(rect.x) + "," + std::to_string(rect.y) + " " +
                                std::to_string(rect.width) + "x" + std::to_string(rect.height) +
                                " is not inside the " + std::to_string(settings.width) + "x" +
                                std::to_string(settings.height) + " image");
  }
  if (frame < 1 || frame > settings.frames) {
    throw std::invalid_argument("frame " + std::to_string(frame) + " is not in 1.." + std::to_string(settings.frames));
  }
  const Camera camera(scene.desc.camera.at_frame(frame), settings.width, settings.height);
  const Tracer tracer(scene);
  const int spp = settings.spp;
  const bool pinhole = !(scene.desc.camera.at_frame(frame).aperture > 0);
  const bool whitted = settings.integrator == IntegratorKind::whitted;
  const PixelFilterSampler filter(settings.filter, settings.filter_width);
  tbb::combinable<RayCounts> local_counts;

  // 8x8 pixel grains: small enough to balance a 4x4..256x256 block over many threads.
  tbb::parallel_for(tbb::blocked_range2d<int>(0, rect.height, 8, 0, rect.width, 8), [&](const tbb::blocked_range2d<int>& r) {
    RayCounts& rc = local_counts.local();
    for (int ly = r.rows().begin(); ly < r.rows().end(); ++ly) {
      for (int lx = r.cols().begin(); lx < r.cols().end(); ++lx) {
        const int x = rect.x + lx, y = rect.y + ly;
        Color sum{0.0f};
        const uint64_t key = pixel_key(settings.seed, frame, x, y);
        for (int s = 0; s < spp; ++s) {
          PixelSampler sampler(key, s, spp);
          Vec2 film = sampler.camera2(0);
          Vec2 lens = pinhole ? Vec2{0.5f, 0.5f} : sampler.camera2(1);  // unused by a pinhole
          // Film position: the pixel's centre plus an offset distributed like the filter.
          const float fx = static_cast<float>(x) + 0.5f + filter.offset(film.x);
          const float fy = static_cast<float>(y) + 0.5f + filter.offset(film.y);
          Ray ray = camera.generate({fx, fy}, lens);
          ++rc.camera;
          Color c = whitted ? trace_whitted(tracer, ray, sampler, rc) : trace_path(tracer, ray, sampler, rc);
          if (is_finite(c)) sum += c;  // a NaN sample must not poison the pixel
        }
        Color mean = sum / static_cast<float>(spp);
        float* out = rgba + 4 * (static_cast<size_t>(ly) * rect.width + lx);
        out[0] = mean.x;
        out[1] = mean.y;
        out[2] = mean.z;
        out[3] = 1.0f;
      }
    }
  });
  if (counts) local_counts.combine_each([&](const RayCounts& rc) { *counts += rc; });
}

}  // namespace rt
