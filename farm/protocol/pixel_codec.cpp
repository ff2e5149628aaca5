#include "protocol/pixel_codec.h"

#include <zstd.h>

#include <cmath>
#include <cstring>

#include "image/image_io.h"

namespace farm::proto {

size_t bytes_per_pixel(PixelEncoding encoding, int carried_floats) {
  switch (encoding) {
    case PixelEncoding::srgb8: return 3;
    case PixelEncoding::half16: return 6;
    case PixelEncoding::float32: return 12 + 4 * static_cast<size_t>(carried_floats);
  }
  return 12;
}

std::vector<uint8_t> encode_pixels(const float* rgba, size_t n, PixelEncoding encoding, const float* carried,
                                   int carried_floats) {
  std::vector<uint8_t> out(n * bytes_per_pixel(encoding));
  if (encoding == PixelEncoding::srgb8) {
    for (size_t i = 0; i < n; ++i)
      for (int c = 0; c < 3; ++c) out[3 * i + c] = rt::linear_to_srgb8(rgba[4 * i + c]);
  } else {
    // float32 (half16 is reserved in the schema but not produced: it would change the bytes
    // of LDR outputs and gains little over zstd-compressed floats for EXR).
    const size_t k = carried ? static_cast<size_t>(carried_floats) : 0, bpp = bytes_per_pixel(encoding, static_cast<int>(k));
    out.resize(n * bpp);
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&out[bpp * i], &rgba[4 * i], 12);
      if (k) std::memcpy(&out[bpp * i + 12], &carried[k * i], 4 * k);
    }
  }
  return out;
}

Status decode_pixels(const std::vector<uint8_t>& wire, size_t n, PixelEncoding encoding, std::vector<uint8_t>& out,
                     int carried_floats) {
  if (encoding == PixelEncoding::half16) return Status::error("half16 pixels are not supported");
  const size_t bpp = bytes_per_pixel(encoding, carried_floats);
  size_t expected = n * bpp;
  if (wire.size() != expected) {
    return Status::error("pixel payload has " + std::to_string(wire.size()) + " bytes, expected " +
                         std::to_string(expected));
  }
  if (encoding == PixelEncoding::float32) {
    // The renderer never produces NaN or infinity (it drops non-finite samples), so such a
    // value is corruption or malice and must not reach the image.
    for (size_t i = 0; i < wire.size(); i += 4) {
      float v;
      std::memcpy(&v, &wire[i], 4);
      if (!std::isfinite(v)) return Status::error("pixel " + std::to_string(i / bpp) + " is not finite");
    }
  }
  out = wire;
  return {};
}

namespace {
// One context per thread, reused: creating one per block costs more than compressing a
// small block (measured with 4x4 blocks in tools/bench/farm_overhead.py).
struct ZstdContexts {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(c);
    ZSTD_freeDCtx(d);
  }
};
ZstdContexts& contexts() {
  thread_local ZstdContexts ctx;
  return ctx;
}
}  // namespace

std::vector<uint8_t> compress(const std::vector<uint8_t>& raw, int level) {
  std::vector<uint8_t> out(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compressCCtx(contexts().c, out.data(), out.size(), raw.data(), raw.size(), level);
  if (ZSTD_isError(n)) return raw;  // cannot happen with a bound-sized buffer
  out.resize(n);
  return out;
}

std::optional<std::vector<uint8_t>> decompress(const std::vector<uint8_t>& packed, size_t expected_size) {
  unsigned long long declared = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared != expected_size) return std::nullopt;
  std::vector<uint8_t> out(expected_size);
  size_t n = ZSTD_decompressDCtx(contexts().d, out.data(), out.size(), packed.data(), packed.size());
  if (ZSTD_isError(n) || n != expected_size) return std::nullopt;
  return out;
}

}  // namespace farm::proto
