#include "shading/resident_image.h"

#include <OpenImageIO/imageio.h>

#include <cstring>
#include <new>
#include <vector>

namespace rt {

ResidentImage::ResidentImage(const std::string& path, int width, int height, int channels, TexelFormat format,
                             const SourceLoc& where)
    : m_channels(channels),
      m_format(format),
      m_tiles_x(tiles(width)),
      m_texel_bytes(stored_channels(channels) * texel_channel_bytes(format)),
      m_bytes(bytes_for(width, height, channels, format)) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) throw SceneError(where.prefix() + "cannot read texture image '" + path + "': " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  // The file may have changed since its size was checked (it is read twice).
  if (spec.width != width || spec.height != height || spec.nchannels < channels) {
    throw SceneError(where.prefix() + "texture image '" + path + "' changed while the scene was loading");
  }
  // Scanlines first (what the decoder gives), then rearranged into tiles.
  const size_t row_texel_bytes = static_cast<size_t>(channels) * texel_channel_bytes(format);
  std::vector<unsigned char> rows(static_cast<size_t>(width) * height * row_texel_bytes);
  if (!in->read_image(0, 0, 0, channels, oiio_type(format), rows.data())) {
    throw SceneError(where.prefix() + "cannot decode texture image '" + path + "': " + in->geterror());
  }
  // 64-byte aligned, so that a 64-byte tile is one cache line.
  const size_t allocated = (m_bytes + 63) / 64 * 64;
  m_data.reset(static_cast<unsigned char*>(std::aligned_alloc(64, allocated)));
  if (!m_data) throw std::bad_alloc();
  std::memset(m_data.get(), 0, allocated);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const size_t tile = static_cast<size_t>(y >> 2) * m_tiles_x + static_cast<size_t>(x >> 2);
      const size_t at = (tile * 16 + static_cast<size_t>((y & 3) << 2 | (x & 3))) * m_texel_bytes;
      std::memcpy(m_data.get() + at, rows.data() + (static_cast<size_t>(y) * width + x) * row_texel_bytes,
                  row_texel_bytes);
    }
  }
}

}  // namespace rt
