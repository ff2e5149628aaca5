#include "shading/texture.h"

#include <OpenImageIO/imageio.h>

#include <cmath>

#include "image/image_io.h"

namespace rt {

namespace {
std::string prefix(const SourceLoc& where) { return where.file.empty() ? "" : where.str() + ": "; }
}  // namespace

RgbImage read_rgb_image(const std::string& path, const SourceLoc& where) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) throw SceneError(prefix(where) + "cannot read image '" + path + "': " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  constexpr long long k_max_pixels = 1LL << 28;  // 16k x 16k; larger is almost surely an error
  if (spec.width <= 0 || spec.height <= 0 || static_cast<long long>(spec.width) * spec.height > k_max_pixels ||
      spec.nchannels <= 0 || spec.nchannels > 64) {
    throw SceneError(prefix(where) + "image '" + path + "' has unsupported size " + std::to_string(spec.width) + "x" +
                     std::to_string(spec.height) + "x" + std::to_string(spec.nchannels));
  }
  bool is_8bit = spec.format == OIIO::TypeDesc::UINT8;
  std::vector<float> data(static_cast<size_t>(spec.width) * spec.height * spec.nchannels);
  if (!in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::FLOAT, data.data())) {
    throw SceneError(prefix(where) + "cannot decode image '" + path + "': " + in->geterror());
  }
  RgbImage img;
  img.width = spec.width;
  img.height = spec.height;
  img.pixels.resize(static_cast<size_t>(img.width) * img.height);
  for (size_t i = 0; i < img.pixels.size(); ++i) {
    const float* p = &data[i * spec.nchannels];
    Color c = spec.nchannels >= 3 ? Color{p[0], p[1], p[2]} : Color{p[0]};
    if (is_8bit) c = {srgb_to_linear(c.x), srgb_to_linear(c.y), srgb_to_linear(c.z)};
    if (!is_finite(c)) c = Color{0.0f};
    img.pixels[i] = max(c, Color{0.0f});
  }
  return img;
}

Color Texture::eval(Vec3 p, Vec2 uv) const {
  if (kind == TextureKind::checker) {
    // A tiny offset keeps surfaces lying exactly on integer planes (y = 0 floors) from
    // flickering between the two colours.
    long long s = static_cast<long long>(std::floor(p.x * scale + 1e-4f)) +
                  static_cast<long long>(std::floor(p.y * scale + 1e-4f)) +
                  static_cast<long long>(std::floor(p.z * scale + 1e-4f));
    return (s & 1) ? odd : even;
  }
  if (image.width == 0) return Color{0.0f};
  float u = uv.x * scale, v = uv.y * scale;
  u -= std::floor(u);
  v -= std::floor(v);
  // v = 0 is the bottom of the image (OpenGL/glTF-style flip is done by the mesh loader).
  float fx = u * image.width - 0.5f, fy = (1 - v) * image.height - 0.5f;
  int x0 = static_cast<int>(std::floor(fx)), y0 = static_cast<int>(std::floor(fy));
  float tx = fx - x0, ty = fy - y0;
  auto wrap = [](int i, int n) { return ((i % n) + n) % n; };
  int x1 = wrap(x0 + 1, image.width), y1 = wrap(y0 + 1, image.height);
  x0 = wrap(x0, image.width);
  y0 = wrap(y0, image.height);
  Color top = lerp(image.at(x0, y0), image.at(x1, y0), tx);
  Color bottom = lerp(image.at(x0, y1), image.at(x1, y1), tx);
  return lerp(top, bottom, ty);
}

Texture load_texture(const TextureDesc& desc) {
  Texture t;
  t.kind = desc.kind;
  t.even = desc.even;
  t.odd = desc.odd;
  t.scale = desc.scale;
  if (desc.kind == TextureKind::image) t.image = read_rgb_image(desc.path, desc.loc);
  return t;
}

}  // namespace rt
