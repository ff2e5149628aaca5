// The image of the live view: 8-bit sRGB of the frame being shown, filled block by block by the
// master's loop as results are accepted, copied out by the web server. Blocks not yet rendered
// stay black. The lock is held for one block's or one image's memcpy, never for an encode.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace farm {

class LiveImage {
 public:
  using Png = std::shared_ptr<const std::vector<uint8_t>>;

  LiveImage(int width, int height);

  // A block's rows of sRGB bytes (3 per pixel), as the frame store holds them.
  void place_rgb8(int x, int y, int width, int height, const uint8_t* rgb);
  // A block's rows of linear float RGB (3 per pixel, EXR jobs): converted as a PNG output would be.
  void place_float_rgb(int x, int y, int width, int height, const float* rgb);

  int width() const { return m_width; }
  int height() const { return m_height; }
  // Blocks placed so far (the image changes with each).
  uint64_t version() const;
  // The image so far as a PNG file's bytes. The last encoding is shared by every caller while
  // the image has not changed or is younger than max_age_seconds: fifty clients polling cost
  // one encode per max_age, not fifty (results/bench_live_load.md). Concurrent callers wait for
  // one encode rather than each making its own. 0: always the image as it is now.
  Png png(double max_age_seconds = 0) const;
  // The image so far scaled down (each thumbnail pixel the mean of the pixels it covers) to at
  // most `max_side` pixels on its longer side, never up; cached as png() is.
  Png thumbnail_png(int max_side, double max_age_seconds = 0) const;

 private:
  // An encoding and what it was made of, shared while the image has not changed or is young.
  struct Encoded {
    Png png;
    uint64_t version = 0;
    int side = 0;  // thumbnails: the max_side asked
    std::chrono::steady_clock::time_point at;
  };
  // The cached encoding, or a new one of what `pixels` makes of the image (under the lock).
  Png encoded(Encoded& cache, int side, double max_age_seconds,
              const std::function<std::vector<uint8_t>(const std::vector<uint8_t>& rgb)>& encode) const;

  int m_width, m_height;
  mutable std::mutex m_mutex;  // the pixels and version
  std::vector<uint8_t> m_rgb;
  uint64_t m_version = 0;
  mutable std::mutex m_encode_mutex;  // the caches below; held through an encode
  mutable Encoded m_png, m_thumbnail;
};

}  // namespace farm
