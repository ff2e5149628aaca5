#include "shading/texture.h"

#include <OpenImageIO/imageio.h>
#include <OpenImageIO/imagecache.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include <cmath>

#include "image/image_io.h"
#include "shading/bilinear.h"
#include "shading/resident_image.h"

namespace rt {

namespace {

// 16k x 16k; larger is almost surely an error (or an attack on memory).
constexpr long long k_max_pixels = 1LL << 28;

Color checker(const TextureDesc& d, Vec3 p) {
  // A tiny offset keeps surfaces lying exactly on integer planes (y = 0 floors) from
  // flickering between the two colours.
  long long s = static_cast<long long>(std::floor(p.x * d.scale + 1e-4f)) +
                static_cast<long long>(std::floor(p.y * d.scale + 1e-4f)) +
                static_cast<long long>(std::floor(p.z * d.scale + 1e-4f));
  return (s & 1) ? d.odd : d.even;
}

}  // namespace

RgbImage read_rgb_image(const std::string& path, const SourceLoc& where) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) throw SceneError(where.prefix() + "cannot read image '" + path + "': " + OIIO::geterror());
  const OIIO::ImageSpec& spec = in->spec();
  if (spec.width <= 0 || spec.height <= 0 || static_cast<long long>(spec.width) * spec.height > k_max_pixels ||
      spec.nchannels <= 0 || spec.nchannels > 64) {
    throw SceneError(where.prefix() + "image '" + path + "' has unsupported size " + std::to_string(spec.width) + "x" +
                     std::to_string(spec.height) + "x" + std::to_string(spec.nchannels));
  }
  bool is_8bit = spec.format == OIIO::TypeDesc::UINT8;
  std::vector<float> data(static_cast<size_t>(spec.width) * spec.height * spec.nchannels);
  if (!in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::FLOAT, data.data())) {
    throw SceneError(where.prefix() + "cannot decode image '" + path + "': " + in->geterror());
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

struct TextureStore::Entry {
  TextureDesc desc;
  int channels = 0;  // held: at most 4
  int width = 0, height = 0;
  TexelFormat format = TexelFormat::u8;
  bool srgb = false;  // integer texels hold sRGB-encoded colours
  std::unique_ptr<ResidentImage> resident;               // decoded at load, within the budget
  OIIO::ImageCache::ImageHandle* cached = nullptr;      // beyond it: read through the tile cache
  bool is_image() const { return resident || cached; }
};

namespace {

// One ImageCache per process, never destroyed: OpenImageIO 2.4's TextureSystem::destroy()
// deletes its object through a base pointer of another size (AddressSanitizer reports a
// new-delete type mismatch inside libOpenImageIO), and a process-wide cache is what OIIO
// intends anyway. Each TextureStore releases its own files again (see ~TextureStore).
OIIO::ImageCache* process_image_cache() {
  static OIIO::ImageCache* cache = [] {
    OIIO::ImageCache* ic = OIIO::ImageCache::create(/*shared=*/false);
    // Untiled, unmipped files (JPEG, PNG) are cut into 64^2 tiles as they are read, so a
    // lookup decodes only the part of a big texture it touches into the cache.
    ic->attribute("autotile", 64);
    ic->attribute("automip", 0);
    ic->attribute("accept_untiled", 1);
    ic->attribute("max_open_files", 100);
    return ic;
  }();
  return cache;
}

TexelFormat held_format(OIIO::TypeDesc file_format) {
  if (file_format.basetype == OIIO::TypeDesc::UINT8) return TexelFormat::u8;
  if (file_format.basetype == OIIO::TypeDesc::UINT16) return TexelFormat::u16;
  return TexelFormat::f32;
}

constexpr size_t k_mib = size_t{1} << 20;

}  // namespace

TextureStore::TextureStore(int cache_mb) : m_cache(process_image_cache()), m_budget_bytes(static_cast<size_t>(std::max(cache_mb, 0)) * k_mib) {
  // The cap is the process's: the scene loaded last sets it (a process renders one scene at
  // a time). Images decoded into memory count against the same budget (see decode_resident).
  m_cache->attribute("max_memory_MB", static_cast<float>(std::max(cache_mb, 1)));
}

TextureStore::~TextureStore() {
  // Closes the files and frees their tiles, so a worker that renders job after job does not
  // keep the textures of finished jobs.
  for (const auto& e : m_entries)
    if (e->cached) m_cache->invalidate(OIIO::ustring(e->desc.path), /*force=*/true);
}

int TextureStore::add(const TextureDesc& desc) {
  auto e = std::make_unique<Entry>();
  e->desc = desc;
  if (desc.kind == TextureKind::image) {
    OIIO::ustring name(desc.path);
    // A file rewritten at the same path since the cache last saw it must be read again.
    m_cache->invalidate(name, /*force=*/false);
    OIIO::ImageSpec spec;
    if (!m_cache->get_imagespec(name, spec, 0, 0)) {
      std::string why = m_cache->geterror();
      throw SceneError(desc.loc.prefix() + "cannot read texture image '" + desc.path + "'" +
                       (why.empty() ? std::string() : ": " + why));
    }
    if (spec.width <= 0 || spec.height <= 0 || static_cast<long long>(spec.width) * spec.height > k_max_pixels ||
        spec.nchannels <= 0 || spec.nchannels > 64) {
      throw SceneError(desc.loc.prefix() + "texture image '" + desc.path + "' has unsupported size " +
                       std::to_string(spec.width) + "x" + std::to_string(spec.height) + "x" +
                       std::to_string(spec.nchannels));
    }
    e->cached = m_cache->get_image_handle(name);
    if (!e->cached) throw SceneError(desc.loc.prefix() + "cannot open texture image '" + desc.path + "'");
    e->channels = std::min(spec.nchannels, 4);
    e->width = spec.width;
    e->height = spec.height;
    e->format = held_format(spec.format);
    e->srgb = e->format != TexelFormat::f32;
  }
  m_entries.push_back(std::move(e));
  return static_cast<int>(m_entries.size() - 1);
}

void TextureStore::decode_resident() {
  // Which images fit is decided in order, so every process given the same budget picks the
  // same ones (the pixels do not depend on it: both holders give the same texels).
  std::vector<Entry*> chosen;
  for (const auto& e : m_entries) {
    if (!e->cached || e->resident) continue;
    size_t bytes = ResidentImage::bytes_for(e->width, e->height, e->channels, e->format);
    if (m_resident_bytes + bytes > m_budget_bytes) continue;
    m_resident_bytes += bytes;
    chosen.push_back(e.get());
  }
  std::vector<std::unique_ptr<ResidentImage>> images(chosen.size());
  tbb::parallel_for(size_t{0}, chosen.size(), [&](size_t i) {
    const Entry& e = *chosen[i];
    images[i] = std::make_unique<ResidentImage>(e.desc.path, e.width, e.height, e.channels, e.format, e.desc.loc);
  });
  for (size_t i = 0; i < chosen.size(); ++i) {
    chosen[i]->resident = std::move(images[i]);
    m_cache->invalidate(OIIO::ustring(chosen[i]->desc.path), /*force=*/true);
    chosen[i]->cached = nullptr;
  }
  // What is left of the budget is the tile cache's.
  size_t left_mb = (m_budget_bytes - m_resident_bytes) / k_mib;
  m_cache->attribute("max_memory_MB", static_cast<float>(std::max<size_t>(left_mb, 1)));
}

std::pair<int, int> TextureStore::resolution(int index) const {
  const Entry& e = *m_entries.at(static_cast<size_t>(index));
  return {e.width, e.height};
}

bool TextureStore::is_resident(int index) const { return m_entries.at(static_cast<size_t>(index))->resident != nullptr; }

Vec2 TextureStore::st(const TextureRef& ref, const HitUvs& uvs) const {
  const Entry& e = *m_entries[static_cast<size_t>(ref.texture)];
  Vec2 uv = ref.uv_set == 1 ? uvs.uv1 : uvs.uv0;
  // To glTF's convention (v down) and through its transform; `scale` is the scene format's
  // repeat count (1 for mesh files).
  float u = uv.x * e.desc.scale, v = 1 - uv.y * e.desc.scale;
  if (ref.transform.is_identity) return {u, v};
  const auto& m = ref.transform.m;
  return {m[0][0] * u + m[0][1] * v + m[0][2], m[1][0] * u + m[1][1] * v + m[1][2]};
}

// Bilinear on the finest level, no footprint: deterministic (see texture.h). Returns false
// (and leaves `out` alone) when the image cannot be read.
bool TextureStore::lookup(const Entry& e, Vec2 at, float* out, float* d_ds, float* d_dt) const {
  if (e.resident) {
    const ResidentImage& image = *e.resident;
    bilinear_lookup(at.x, at.y, e.width, e.height, e.desc.wrap_s, e.desc.wrap_t, e.channels,
                    [&](int x, int y, float* texel) { image.texel(x, y, texel); }, out, d_ds, d_dt);
    return true;
  }
  bool ok = true;
  const OIIO::TypeDesc type = oiio_type(e.format);
  auto fetch = [&](int x, int y, float* texel) {
    unsigned char raw[16];
    if (!m_cache->get_pixels(e.cached, nullptr, 0, 0, x, x + 1, y, y + 1, 0, 1, 0, e.channels, type, raw)) {
      ok = false;
      return;
    }
    texels_to_float(raw, e.format, e.channels, texel);
  };
  float value[4], ds = 0, dt = 0;
  bilinear_lookup(at.x, at.y, e.width, e.height, e.desc.wrap_s, e.desc.wrap_t, e.channels, fetch, value, &ds, &dt);
  if (!ok) {
    (void)m_cache->geterror();  // a failed read keeps the defaults; the error must not pile up
    return false;
  }
  std::copy(value, value + e.channels, out);
  if (d_ds) *d_ds = ds;
  if (d_dt) *d_dt = dt;
  return true;
}

TextureStore::Gradient TextureStore::first_channel_gradient(const TextureRef& ref, const HitUvs& uvs) const {
  const Entry& e = *m_entries[static_cast<size_t>(ref.texture)];
  Gradient g;
  Vec2 at = st(ref, uvs);
  if (!e.is_image() || !std::isfinite(at.x) || !std::isfinite(at.y)) return g;
  float value[4] = {0, 0, 0, 0}, d_ds = 0, d_dt = 0;
  if (!lookup(e, at, value, &d_ds, &d_dt)) return g;
  // (s, t) = M (u k, 1 - v k) with k = the scene format's repeat count: the chain rule.
  const float k = e.desc.scale;
  const auto& m = ref.transform.m;
  float ds_du = m[0][0] * k, ds_dv = -m[0][1] * k, dt_du = m[1][0] * k, dt_dv = -m[1][1] * k;
  g.value = value[0];
  g.d_du = d_ds * ds_du + d_dt * dt_du;
  g.d_dv = d_ds * ds_dv + d_dt * dt_dv;
  if (!std::isfinite(g.d_du) || !std::isfinite(g.d_dv)) g.d_du = g.d_dv = 0;
  return g;
}

TexelValue TextureStore::raw_at_st(int index, Vec2 st) const {
  const Entry& e = *m_entries[static_cast<size_t>(index)];
  TexelValue out;
  if (!e.is_image() || !std::isfinite(st.x) || !std::isfinite(st.y)) return out;
  float texel[4] = {0, 0, 0, 1};
  const int n = e.channels;
  if (!lookup(e, st, texel)) return out;
  if (n <= 2) {
    out.rgb = Color{texel[0]};
    out.alpha = n == 2 ? texel[1] : 1.0f;
  } else {
    out.rgb = {texel[0], texel[1], texel[2]};
    out.alpha = n == 4 ? texel[3] : 1.0f;
  }
  return out;
}

TexelValue TextureStore::raw(const TextureRef& ref, Vec3 p, const HitUvs& uvs) const {
  const Entry& e = *m_entries[static_cast<size_t>(ref.texture)];
  if (e.desc.kind == TextureKind::checker) return {checker(e.desc, p), 1.0f};
  return raw_at_st(ref.texture, st(ref, uvs));
}

Color TextureStore::color(const TextureRef& ref, Vec3 p, const HitUvs& uvs) const {
  const Entry& e = *m_entries[static_cast<size_t>(ref.texture)];
  TexelValue v = raw(ref, p, uvs);
  Color c = v.rgb;
  if (e.srgb) c = {srgb_to_linear(c.x), srgb_to_linear(c.y), srgb_to_linear(c.z)};
  if (!is_finite(c)) return Color{0.0f};
  return max(c, Color{0.0f});
}

float material_alpha(const TextureStore& textures, const MaterialDesc& m, Vec3 p, const HitUvs& uvs) {
  if (m.alpha_mode == AlphaMode::opaque) return 1.0f;
  float a = m.alpha;
  if (m.opacity_map.valid()) {
    TexelValue t = textures.raw(m.opacity_map, p, uvs);
    switch (m.opacity_channel) {
      case 0: a *= t.rgb.x; break;
      case 1: a *= t.rgb.y; break;
      case 2: a *= t.rgb.z; break;
      default: a *= t.alpha; break;
    }
  }
  return std::isfinite(a) ? a : 1.0f;
}

}  // namespace rt
