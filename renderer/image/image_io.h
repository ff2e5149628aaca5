// Writing rendered images. The format follows the file extension: PNG, TGA and PPM are
// 8-bit sRGB (clamped, RGB); EXR is linear float RGBA. Conversion is ours, not the
// library's, so the bytes are the same whatever OpenImageIO version writes them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rt {

enum class ImageFormat { png, tga, ppm, exr };

// Throws std::invalid_argument naming the extension and the supported ones.
// Call before rendering so a typo does not cost a whole render.
ImageFormat image_format_for(const std::string& path);

// Linear float -> 8-bit sRGB with rounding to nearest; NaN becomes 0.
uint8_t linear_to_srgb8(float v);
// sRGB-encoded value in [0, 1] -> linear (the inverse transfer function).
float srgb_to_linear(float encoded);

// `rgba`: width * height pixels, 4 floats each, rows from the top.
// Throws std::runtime_error if the file cannot be written. Writes to a temporary file in
// the same folder and renames it, so a reader never sees a half-written image.
void write_image(const std::string& path, int width, int height, const float* rgba);

// An EXR of `names.size()` float channels per pixel, interleaved, with those names: with
// "Layer.Pass.Channel" names a multi-layer file as Blender writes one (scene/passes.h). Same
// temporary file, read-back check and rename as write_image. Throws std::invalid_argument for a
// path that is not .exr.
// `attributes`: text metadata to carry (name, value), e.g. Cryptomatte's manifests.
void write_exr_channels(const std::string& path, int width, int height, const float* data,
                        const std::vector<std::string>& names,
                        const std::vector<std::pair<std::string, std::string>>& attributes = {});

// The 8-bit path of write_image for callers that already hold sRGB bytes (3 per pixel),
// e.g. the farm's master. Same bytes on disk as write_image would produce.
void write_image_rgb8(const std::string& path, int width, int height, const uint8_t* rgb);

// The same 8-bit pixels as a PNG file's bytes, in memory (the farm's live view serves them).
// fast: zlib level 1 and only the Sub row filter instead of OpenImageIO's level 6 and libpng's
// adaptive choice among five filters per row: several times less CPU for somewhat larger bytes,
// what a picture re-encoded every second wants. Throws std::runtime_error if OpenImageIO cannot
// encode.
std::vector<uint8_t> encode_png_rgb8(int width, int height, const uint8_t* rgb, bool fast = false);

}  // namespace rt
