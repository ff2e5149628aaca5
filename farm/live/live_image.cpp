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

LiveImage::Png LiveImage::png(double max_age_seconds) const {
  std::lock_guard<std::mutex> encode_lock(m_encode_mutex);
  const auto now = std::chrono::steady_clock::now();
  std::vector<uint8_t> copy;
  uint64_t version = 0;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    version = m_version;
    const bool young = std::chrono::duration<double>(now - m_png_at).count() < max_age_seconds;
    if (m_png && (version == m_png_version || young)) return m_png;
    copy = m_rgb;
  }
  m_png = std::make_shared<const std::vector<uint8_t>>(rt::encode_png_rgb8(m_width, m_height, copy.data(), true));
  m_png_version = version;
  m_png_at = now;
  return m_png;
}

}  // namespace farm
