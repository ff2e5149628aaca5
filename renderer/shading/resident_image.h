// An image texture decoded whole into memory when the scene loads. A lookup is four array
// reads (tens of nanoseconds) where OpenImageIO's TextureSystem took about a microsecond,
// and no texel is decoded during the render (DamagedHelmet's JPEGs cost 1.3 s of its first
// render through the tile cache; see results/bench_textures.md).
#pragma once

#include <string>
#include <vector>

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
    size_t at = (static_cast<size_t>(y) * static_cast<size_t>(m_width) + static_cast<size_t>(x)) * m_texel_bytes;
    texels_to_float(m_data.data() + at, m_format, m_channels, out);
  }
  size_t bytes() const { return m_data.size(); }

  static size_t bytes_for(int width, int height, int channels, TexelFormat format) {
    return static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels) *
           texel_channel_bytes(format);
  }

 private:
  int m_width = 0, m_channels = 0;
  TexelFormat m_format = TexelFormat::u8;
  size_t m_texel_bytes = 0;
  std::vector<unsigned char> m_data;
};

}  // namespace rt
