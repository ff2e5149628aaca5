// How an image texture's texels are held, in memory or in OpenImageIO's cache: 8 and 16-bit
// integers as in the file (sRGB-encoded colours stay encoded and are decoded after
// filtering), everything else as 32-bit float. One conversion to float for both holders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <OpenImageIO/typedesc.h>

namespace rt {

enum class TexelFormat { u8, u16, f32 };

// The OpenImageIO type both holders ask the decoder for.
inline OIIO::TypeDesc oiio_type(TexelFormat f) {
  switch (f) {
    case TexelFormat::u8: return OIIO::TypeDesc::UINT8;
    case TexelFormat::u16: return OIIO::TypeDesc::UINT16;
    default: return OIIO::TypeDesc::FLOAT;
  }
}

inline size_t texel_channel_bytes(TexelFormat f) { return f == TexelFormat::u8 ? 1 : f == TexelFormat::u16 ? 2 : 4; }

// `n` channels at `raw` (in format `f`) as floats in [0, 1] (integers) or as stored (floats).
inline void texels_to_float(const unsigned char* raw, TexelFormat f, int n, float* out) {
  switch (f) {
    case TexelFormat::u8:
      for (int k = 0; k < n; ++k) out[k] = static_cast<float>(raw[k]) * (1.0f / 255.0f);
      break;
    case TexelFormat::u16:
      for (int k = 0; k < n; ++k) {
        uint16_t v;
        std::memcpy(&v, raw + 2 * k, 2);
        out[k] = static_cast<float>(v) * (1.0f / 65535.0f);
      }
      break;
    default: std::memcpy(out, raw, sizeof(float) * static_cast<size_t>(n)); break;
  }
}

}  // namespace rt
