// Pixels of one block on the wire. The master's output decides the encoding: 8-bit sRGB for
// PNG/TGA/PPM (exactly the bytes `farm single` would write, so the image stays identical),
// float32 RGB for EXR. Either may be zstd-compressed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "protocol/protocol.h"

namespace farm::proto {

// Bytes per pixel of an encoding on the wire (before compression). With float32, the other channels
// of a multi-layer output (`carried_floats` per pixel: proto::carried_floats) follow each pixel's
// colour; 8-bit outputs carry none (the master asks for none: job_spec.cpp).
size_t bytes_per_pixel(PixelEncoding encoding, int carried_floats = 0);

// `rgba`: pixel_count pixels of 4 floats. Alpha is not sent (the renderer's alpha is 1).
// `carried`: pixel_count x carried_floats floats, sent after each pixel's colour (float32 only).
std::vector<uint8_t> encode_pixels(const float* rgba, size_t pixel_count, PixelEncoding encoding,
                                   const float* carried = nullptr, int carried_floats = 0);

// Fills `rgb8` (3 bytes/pixel) or `rgb32f` (3 floats/pixel, then the carried ones) from a block's
// wire bytes, after checking the size against the block; the error names what is wrong with
// the payload.
Status decode_pixels(const std::vector<uint8_t>& wire, size_t pixel_count, PixelEncoding encoding,
                     std::vector<uint8_t>& out, int carried_floats = 0);

// zstd; `level` 1 is fast and enough for render output.
std::vector<uint8_t> compress(const std::vector<uint8_t>& raw, int level = 1);
// Refuses to produce more than `expected_size` bytes (a hostile frame cannot balloon memory).
std::optional<std::vector<uint8_t>> decompress(const std::vector<uint8_t>& packed, size_t expected_size);

}  // namespace farm::proto
