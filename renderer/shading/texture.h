// Textures evaluated at a hit: procedural checker (in world space) and images (by uv).
#pragma once

#include <string>
#include <vector>

#include "math/vec.h"
#include "scene/scene_desc.h"

namespace rt {

// Linear RGB float image, rows top to bottom.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<Color> pixels;
  const Color& at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// Reads any format OpenImageIO knows; 8-bit images are decoded from sRGB to linear.
// Throws SceneError naming `where` and the file on failure.
RgbImage read_rgb_image(const std::string& path, const SourceLoc& where);

struct Texture {
  TextureKind kind = TextureKind::checker;
  Color even{1.0f}, odd{0.0f};
  float scale = 1.0f;
  RgbImage image;

  // Checker: parity of floor(p * scale) summed over axes; image: bilinear, uv repeats.
  Color eval(Vec3 world_position, Vec2 uv) const;
};

Texture load_texture(const TextureDesc& desc);

}  // namespace rt
