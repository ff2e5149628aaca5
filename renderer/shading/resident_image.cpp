#include "shading/resident_image.h"

#include <OpenImageIO/imageio.h>

namespace rt {

namespace {

OIIO::TypeDesc oiio_type(TexelFormat f) {
  switch (f) {
    case TexelFormat::u8: return OIIO::TypeDesc::UINT8;
    case TexelFormat::u16: return OIIO::TypeDesc::UINT16;
    default: return OIIO::TypeDesc::FLOAT;
  }
}

std::string prefix(const SourceLoc& where) { return where.file.empty() ? "" : where.str() + ": "; }

}  // namespace

ResidentImage::ResidentImage(const std::string& path, int width, int height, int channels, TexelFormat format,
                             const SourceLoc& where)
    : m_width(width), m_channels(channels), m_format(format), m_texel_bytes(channels * texel_channel_bytes(format)) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) throw SceneError(prefix(where) + "cannot read texture image '" + path + "': " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  // The file may have changed since its size was checked (it is read twice).
  if (spec.width != width || spec.height != height || spec.nchannels < channels) {
    throw SceneError(prefix(where) + "texture image '" + path + "' changed while the scene was loading");
  }
  m_data.resize(bytes_for(width, height, channels, format));
  if (!in->read_image(0, 0, 0, channels, oiio_type(format), m_data.data())) {
    throw SceneError(prefix(where) + "cannot decode texture image '" + path + "': " + in->geterror());
  }
}

}  // namespace rt
