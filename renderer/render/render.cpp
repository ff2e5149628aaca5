#include "render/render.h"

#include <tbb/blocked_range2d.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "integrators/integrator.h"
#include "render/adaptive_sampling.h"
#include "render/camera.h"
#include "render/pass_values.h"
#include "sampling/pixel_filter.h"

namespace rt {

void render_rect(const Scene& scene, int frame, Rect rect, float* rgba, RayCounts* counts, float* passes) {
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
  const PixelFilterSampler& filter = PixelFilterSampler::shared(settings.filter, settings.filter_width);
  const AdaptiveSchedule adaptive(settings);
  const PassSet pass_set = passes ? settings.passes : 0;
  const int pass_floats = pass_channel_count(pass_set);
  const bool need_squares = adaptive.on() || has_pass(pass_set, Pass::variance);
  const ViewAxis view{camera.position(), camera.forward()};
  tbb::combinable<RayCounts> local_counts;

  // Camera rays are traced in packets (Tracer::intersect_packet): the 4x4 pixels of an
  // image-aligned cell, one sample index at a time. Embree does not promise that a ray's hit
  // is independent of the other rays in its packet (the traversal order follows the packet,
  // and a tie between two triangles goes to the first found), so a packet always holds the
  // same rays whatever rectangle asked for them: cells cut by the rectangle's border are
  // traced whole and the pixels outside thrown away. That keeps the farm's image
  // byte-identical to `farm single`'s for any block layout by construction, at the price of
  // some wasted camera rays for blocks not aligned to 4 pixels. (Tracing only the rectangle's
  // own rays gave the same bytes on the determinism tests, Sponza included; we do not rely on it.)
  //
  // With adaptive sampling, no pixel stops before the first check, so packets are whole until
  // then. Past it, pixels of a cell stop at different counts and the packet
  // would go on tracing the camera rays of the stopped ones (up to 15 of 16 per sample, wasted).
  // From that sample on, each running pixel traces its own camera ray alone. Which way a sample's
  // ray goes depends only on its sample index, never on which pixels the rectangle holds, so a
  // pixel's bytes still do not depend on the tiling. The switch comes no later than the automatic
  // first check of `spp`, even when --min-samples is higher: then a render whose pixels all stop
  // at n is, pixel for pixel, the n-sample prefix of one with the automatic minimum (how
  // tools/bench/convergence_samples.py counts a pixel's samples).
  const int packet_samples =
      adaptive.on() ? std::min(adaptive.first_check(), AdaptiveSchedule::automatic_first_check(spp)) : spp;
  constexpr int k_cell = 4;
  static_assert(k_cell * k_cell == k_camera_packet, "one packet per cell");
  const int cx0 = rect.x / k_cell, cy0 = rect.y / k_cell;
  const int cx1 = (rect.x + rect.width - 1) / k_cell + 1, cy1 = (rect.y + rect.height - 1) / k_cell + 1;
  // 2x2-cell (8x8 pixel) grains: small enough to balance a 4x4..256x256 block over many threads.
  tbb::parallel_for(tbb::blocked_range2d<int>(cy0, cy1, 2, cx0, cx1, 2), [&](const tbb::blocked_range2d<int>& r) {
    RayCounts& rc = local_counts.local();
    Ray rays[k_camera_packet];
    SurfaceHit hits[k_camera_packet];
    bool found[k_camera_packet];
    for (int cy = r.rows().begin(); cy < r.rows().end(); ++cy) {
      for (int cx = r.cols().begin(); cx < r.cols().end(); ++cx) {
        int px[k_camera_packet], py[k_camera_packet];
        bool in_image[k_camera_packet], in_rect[k_camera_packet];
        uint64_t keys[k_camera_packet];
        Color sums[k_camera_packet], squares[k_camera_packet];
        PixelPassSums pass_sums[k_camera_packet];
        int taken[k_camera_packet];   // samples of the pixel so far
        bool active[k_camera_packet];  // in the rectangle and still taking samples
        int running = 0;
        for (int i = 0; i < k_camera_packet; ++i) {
          px[i] = cx * k_cell + i % k_cell;
          py[i] = cy * k_cell + i / k_cell;
          in_image[i] = px[i] < settings.width && py[i] < settings.height;
          in_rect[i] = px[i] >= rect.x && px[i] < rect.x + rect.width && py[i] >= rect.y && py[i] < rect.y + rect.height;
          keys[i] = in_image[i] ? pixel_key(settings.seed, frame, px[i], py[i]) : 0;
          sums[i] = squares[i] = Color{0.0f};
          pass_sums[i] = PixelPassSums{};
          taken[i] = 0;
          active[i] = in_rect[i];
          running += active[i];
        }
        for (int s = 0; s < spp && running > 0; ++s) {
          std::optional<PixelSampler> samplers[k_camera_packet];
          const bool packet = s < packet_samples;
          for (int i = 0; i < k_camera_packet; ++i) {
            if (!in_image[i] || (!packet && !active[i])) continue;
            PixelSampler& sampler = samplers[i].emplace(keys[i], s, spp);
            Vec2 film = sampler.camera2(0);
            Vec2 lens = pinhole ? Vec2{0.5f, 0.5f} : sampler.camera2(1);  // unused by a pinhole
            // Film position: the pixel's centre plus an offset distributed like the filter.
            const float fx = static_cast<float>(px[i]) + 0.5f + filter.offset(film.x);
            const float fy = static_cast<float>(py[i]) + 0.5f + filter.offset(film.y);
            rays[i] = camera.generate({fx, fy}, lens);
          }
          if (packet) {
            tracer.intersect_packet(rays, in_image, hits, found);
          } else {
            for (int i = 0; i < k_camera_packet; ++i)
              if (active[i]) found[i] = tracer.intersect(rays[i], k_ray_infinity, hits[i]);
          }
          for (int i = 0; i < k_camera_packet; ++i) {
            if (!active[i]) continue;
            ++rc.camera;
            const SurfaceHit* first = found[i] ? &hits[i] : nullptr;
            if (pass_set) add_first_hit(pass_sums[i], scene, first, view, taken[i] == 0);
            Color c = whitted ? trace_whitted(tracer, rays[i], first, *samplers[i], rc)
                              : trace_path(tracer, rays[i], first, *samplers[i], rc);
            if (is_finite(c)) {  // a NaN sample must not poison the pixel
              sums[i] += c;
              if (need_squares) squares[i] += c * c;
            }
            ++taken[i];
            if (adaptive.checks_at(taken[i]) && adaptive.converged(sums[i], squares[i], taken[i])) {
              active[i] = false;
              --running;
            }
          }
        }
        for (int i = 0; i < k_camera_packet; ++i) {
          if (!in_rect[i]) continue;
          Color mean = sums[i] / static_cast<float>(taken[i]);
          float* out = rgba + 4 * (static_cast<size_t>(py[i] - rect.y) * rect.width + (px[i] - rect.x));
          out[0] = mean.x;
          out[1] = mean.y;
          out[2] = mean.z;
          out[3] = 1.0f;
          if (pass_set) {
            float* p = passes + static_cast<size_t>(pass_floats) *
                                    (static_cast<size_t>(py[i] - rect.y) * rect.width + (px[i] - rect.x));
            write_pass_values(pass_set, pass_sums[i], sums[i], squares[i], taken[i], p);
          }
        }
      }
    }
  });
  if (counts) local_counts.combine_each([&](const RayCounts& rc) { *counts += rc; });
}

}  // namespace rt
