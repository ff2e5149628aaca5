// An image texture decoded whole into memory when the scene loads. A lookup is a few memory
// reads (tens of nanoseconds) where OpenImageIO's TextureSystem took about a microsecond,
// and no texel is decoded during the render (DamagedHelmet's JPEGs cost 1.3 s of its first
// render through the tile cache; see results/bench_textures.md).
//
// Texels are stored in 4x4 tiles, 3-channel images padded to 4 channels: an 8-bit RGB(A)
// tile is one 64-byte cache line, so a bilinear footprint (2x2 texels) usually costs one
// cache miss instead of two (two image rows apart). Scattered lookups on big textures are
// bound by those misses (Sponza path tracing: perf shows the texel loads as the hot spot).
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "scene/scene_desc.h"
#include "shading/texel_format.h"

namespace rt {

class ResidentImage {
 public:
  // Decodes channels [0, channels) of `path` as `format`. Throws SceneError naming `where`
  // and the file when it cannot be read or its size is not width x height.
  ResidentImage(const std::string& path, int width, int height, int channels, TexelFormat format,
                const SourceLoc& where);

  // The image's `channels` values at texel (x, y), 0 <= x < width, 0 <= y < height.
  void texel(int x, int y, float* out) const {
    const size_t tile = static_cast<size_t>(y >> 2) * m_tiles_x + static_cast<size_t>(x >> 2);
    const size_t at = (tile * 16 + static_cast<size_t>((y & 3) << 2 | (x & 3))) * m_texel_bytes;
    texels_to_float(m_data.get() + at, m_format, m_channels, out);
  }
  size_t bytes() const { return m_bytes; }

  // What an image of this size takes in memory (tiles and padding included).
  static size_t bytes_for(int width, int height, int channels, TexelFormat format) {
    return tiles(width) * tiles(height) * 16 * stored_channels(channels) * texel_channel_bytes(format);
  }

 private:
  static size_t tiles(int n) { return (static_cast<size_t>(n) + 3) / 4; }
  static size_t stored_channels(int channels) { return channels == 3 ? 4 : static_cast<size_t>(channels); }
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  int m_channels = 0;
  TexelFormat m_format = TexelFormat::u8;
  size_t m_tiles_x = 0;
  size_t m_texel_bytes = 0;
  size_t m_bytes = 0;
  std::unique_ptr<unsigned char[], Free> m_data;
};

}  // namespace rt
