// Textures evaluated at a hit: procedural checkers (in world space) and image textures.
// Images are decoded into memory when the scene loads, as long as they fit in the texture
// budget (--texture-cache); the rest are read through OpenImageIO's ImageCache (tiled,
// with the remaining budget as its memory cap). Either way an image is held once for all
// render threads.
//
// Lookups are deterministic: bilinear on the finest level with no ray-footprint
// derivatives, one implementation for both holders (shading/bilinear.h), so a pixel's value
// depends only on its own rays, never on which block, thread or machine rendered it, how
// large that machine's budget was, nor on what the cache held at the time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "math/vec.h"
#include "scene/scene_desc.h"

#include <OpenImageIO/oiioversion.h>

OIIO_NAMESPACE_BEGIN
class ImageCache;
OIIO_NAMESPACE_END

namespace rt {

// Linear RGB float image, rows top to bottom (environment maps).
struct RgbImage {
  int width = 0, height = 0;
  std::vector<Color> pixels;
  const Color& at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// Reads any format OpenImageIO knows; 8-bit images are decoded from sRGB to linear.
// Throws SceneError naming `where` and the file on failure.
RgbImage read_rgb_image(const std::string& path, const SourceLoc& where);

// Texture coordinates at a hit, in the renderer's convention (v = 0 at the bottom of an
// image, as OBJ writes them; glTF's v-down coordinates are flipped by its loader).
struct HitUvs {
  Vec2 uv0, uv1;
};

struct TexelValue {
  Color rgb{0.0f};
  float alpha = 1.0f;
};

class TextureStore {
 public:
  // `cache_mb` caps the memory of decoded texels: images decoded whole at load plus the
  // tile cache of those that did not fit (OpenImageIO evicts tiles beyond it).
  explicit TextureStore(int cache_mb = 1024);
  ~TextureStore();
  TextureStore(const TextureStore&) = delete;
  TextureStore& operator=(const TextureStore&) = delete;

  // Opens (but does not decode) an image texture. Throws SceneError naming desc.loc and the
  // file when it cannot be read. Returns the texture's index. Until decode_resident, its
  // lookups go through the tile cache.
  int add(const TextureDesc& desc);
  // Decodes the images added so far into memory, in parallel, in order while they fit in the
  // budget; the tile cache keeps what is left of it. Throws SceneError as add does.
  void decode_resident();
  bool is_resident(int index) const;
  size_t resident_bytes() const { return m_resident_bytes; }
  size_t size() const { return m_entries.size(); }
  // Texels of image `index` (width, height); {0, 0} for checkers.
  std::pair<int, int> resolution(int index) const;

  // Raw channels (no colour decoding): grey images fill r, g and b; alpha is 1 without one.
  TexelValue raw(const TextureRef& ref, Vec3 p, const HitUvs& uvs) const;
  // A colour: 8/16-bit images are sRGB-encoded (glTF, MTL, PNG/JPEG), float images linear.
  Color color(const TextureRef& ref, Vec3 p, const HitUvs& uvs) const;
  // The texture's uv (after transform), in OpenImageIO's s/t (t down the image).
  Vec2 st(const TextureRef& ref, const HitUvs& uvs) const;
  TexelValue raw_at_st(int index, Vec2 st) const;
  // The first channel and its derivatives along the hit's u and v (of the ref's uv set), from
  // one filtered lookup: what a bump map needs.
  struct Gradient {
    float value = 0, d_du = 0, d_dv = 0;
  };
  Gradient first_channel_gradient(const TextureRef& ref, const HitUvs& uvs) const;

 private:
  struct Entry;
  bool lookup(const Entry& e, Vec2 st, float* out, float* d_ds = nullptr, float* d_dt = nullptr) const;
  OIIO::ImageCache* m_cache = nullptr;
  size_t m_budget_bytes = 0;
  size_t m_resident_bytes = 0;
  std::vector<std::unique_ptr<Entry>> m_entries;
};

// Opacity of a cut-out material at a point (1 for opaque materials).
float material_alpha(const TextureStore& textures, const MaterialDesc& material, Vec3 p, const HitUvs& uvs);

}  // namespace rt
