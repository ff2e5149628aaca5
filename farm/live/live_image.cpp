#include "live/live_image.h"

#include <algorithm>
#include <cstring>

#include "base/memory.h"
#include "image/image_io.h"

namespace farm {

LiveImage::LiveImage(int width, int height) : m_width(std::max(width, 0)), m_height(std::max(height, 0)) {
  allocate_filled(m_rgb, static_cast<size_t>(m_width) * m_height * 3, uint8_t{0},
                  "the live view's " + image_size_text(m_width, m_height) + " image", "8-bit RGB");
}

namespace {
// The part of a block inside the image (a block is always inside; this guards the copy anyway).
bool clip(int image_w, int image_h, int x, int y, int w, int h) {
  return x >= 0 && y >= 0 && w >= 0 && h >= 0 && x + w <= image_w && y + h <= image_h;
}
}  // namespace

void LiveImage::place_rgb8(int x, int y, int w, int h, const uint8_t* rgb) {
  if (!clip(m_width, m_height, x, y, w, h)) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  for (int row = 0; row < h; ++row)
    std::memcpy(&m_rgb[(static_cast<size_t>(y + row) * m_width + x) * 3], rgb + static_cast<size_t>(row) * w * 3,
                static_cast<size_t>(w) * 3);
  ++m_version;
}

void LiveImage::place_float_rgb(int x, int y, int w, int h, const float* rgb) {
  if (!clip(m_width, m_height, x, y, w, h)) return;
  std::vector<uint8_t> bytes(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = rt::linear_to_srgb8(rgb[i]);
  place_rgb8(x, y, w, h, bytes.data());
}

uint64_t LiveImage::version() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_version;
}

LiveImage::Png LiveImage::encoded(Encoded& cache, int side, double max_age_seconds,
                                  const std::function<std::vector<uint8_t>(const std::vector<uint8_t>&)>& encode) const {
  std::lock_guard<std::mutex> encode_lock(m_encode_mutex);
  const auto now = std::chrono::steady_clock::now();
  std::vector<uint8_t> copy;
  uint64_t version = 0;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    version = m_version;
    const bool young = std::chrono::duration<double>(now - cache.at).count() < max_age_seconds;
    if (cache.png && cache.side == side && (version == cache.version || young)) return cache.png;
    copy = m_rgb;
  }
  cache.png = std::make_shared<const std::vector<uint8_t>>(encode(copy));
  cache.version = version;
  cache.side = side;
  cache.at = now;
  return cache.png;
}

LiveImage::Png LiveImage::png(double max_age_seconds) const {
  return encoded(m_png, 0, max_age_seconds,
                 [this](const std::vector<uint8_t>& rgb) { return rt::encode_png_rgb8(m_width, m_height, rgb.data(), true); });
}

LiveImage::Png LiveImage::thumbnail_png(int max_side, double max_age_seconds) const {
  max_side = std::max(1, max_side);
  const int longer = std::max(m_width, m_height);
  const double scale = longer > max_side ? static_cast<double>(max_side) / longer : 1.0;
  const int tw = std::max(1, static_cast<int>(m_width * scale)), th = std::max(1, static_cast<int>(m_height * scale));
  return encoded(m_thumbnail, max_side, max_age_seconds, [this, tw, th](const std::vector<uint8_t>& rgb) {
    std::vector<uint8_t> small(static_cast<size_t>(tw) * th * 3);
    for (int ty = 0; ty < th; ++ty) {
      const int y0 = static_cast<int>(static_cast<int64_t>(ty) * m_height / th);
      const int y1 = std::max(y0 + 1, static_cast<int>(static_cast<int64_t>(ty + 1) * m_height / th));
      for (int tx = 0; tx < tw; ++tx) {
        const int x0 = static_cast<int>(static_cast<int64_t>(tx) * m_width / tw);
        const int x1 = std::max(x0 + 1, static_cast<int>(static_cast<int64_t>(tx + 1) * m_width / tw));
        uint64_t sum[3] = {0, 0, 0};
        for (int y = y0; y < y1; ++y)
          for (int x = x0; x < x1; ++x)
            for (int c = 0; c < 3; ++c) sum[c] += rgb[(static_cast<size_t>(y) * m_width + x) * 3 + c];
        const uint64_t n = static_cast<uint64_t>(y1 - y0) * (x1 - x0);
        for (int c = 0; c < 3; ++c)
          small[(static_cast<size_t>(ty) * tw + tx) * 3 + c] = static_cast<uint8_t>((sum[c] + n / 2) / n);
      }
    }
    return rt::encode_png_rgb8(tw, th, small.data(), true);
  });
}

}  // namespace farm
