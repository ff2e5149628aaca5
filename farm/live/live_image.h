// The image of the live view: 8-bit sRGB of the frame being shown, filled block by block by the
// master's loop as results are accepted, copied out by the web server. Blocks not yet rendered
// stay black. The lock is held for one block's or one image's memcpy, never for an encode.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace farm {

class LiveImage {
 public:
  LiveImage(int width, int height);

  // A block's rows of sRGB bytes (3 per pixel), as the frame store holds them.
  void place_rgb8(int x, int y, int width, int height, const uint8_t* rgb);
  // A block's rows of linear float RGB (3 per pixel, EXR jobs): converted as a PNG output would be.
  void place_float_rgb(int x, int y, int width, int height, const float* rgb);

  int width() const { return m_width; }
  int height() const { return m_height; }
  // The image so far, as a PNG file's bytes.
  std::vector<uint8_t> png() const;

 private:
  int m_width, m_height;
  mutable std::mutex m_mutex;
  std::vector<uint8_t> m_rgb;
};

}  // namespace farm
