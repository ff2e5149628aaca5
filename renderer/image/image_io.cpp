#include "image/image_io.h"

#include <OpenImageIO/imageio.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace rt {

ImageFormat image_format_for(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".png") return ImageFormat::png;
  if (ext == ".tga") return ImageFormat::tga;
  if (ext == ".ppm") return ImageFormat::ppm;
  if (ext == ".exr") return ImageFormat::exr;
  throw std::invalid_argument("unsupported output format '" + (ext.empty() ? std::string("(no extension)") : ext) +
                              "' for '" + path + "'; use .png, .tga, .ppm or .exr");
}

uint8_t linear_to_srgb8(float v) {
  if (!(v > 0)) return 0;  // also NaN
  if (v >= 1) return 255;
  float s = v <= 0.0031308f ? 12.92f * v : 1.055f * std::pow(v, 1.0f / 2.4f) - 0.055f;
  return static_cast<uint8_t>(std::min(255.0f, std::floor(s * 255.0f + 0.5f)));
}

void write_image(const std::string& path, int width, int height, const float* rgba) {
  const ImageFormat format = image_format_for(path);
  const size_t pixels = static_cast<size_t>(width) * height;
  std::filesystem::path final_path(path);
  // Keep the real extension last: OpenImageIO picks the writer from it.
  std::filesystem::path tmp = final_path.parent_path() /
                              (".tmp." + std::to_string(::getpid()) + "." + final_path.filename().string());
  auto out = OIIO::ImageOutput::create(tmp.string());
  if (!out) throw std::runtime_error("cannot write '" + path + "': " + OIIO::geterror());
  bool ok;
  if (format == ImageFormat::exr) {
    OIIO::ImageSpec spec(width, height, 4, OIIO::TypeDesc::FLOAT);
    spec.attribute("compression", "zip");
    ok = out->open(tmp.string(), spec) && out->write_image(OIIO::TypeDesc::FLOAT, rgba);
  } else {
    std::vector<uint8_t> bytes(pixels * 3);
    for (size_t i = 0; i < pixels; ++i)
      for (int c = 0; c < 3; ++c) bytes[3 * i + c] = linear_to_srgb8(rgba[4 * i + c]);
    OIIO::ImageSpec spec(width, height, 3, OIIO::TypeDesc::UINT8);
    if (format == ImageFormat::ppm) spec.attribute("pnm:binary", 1);
    ok = out->open(tmp.string(), spec) && out->write_image(OIIO::TypeDesc::UINT8, bytes.data());
  }
  std::string error = ok ? "" : out->geterror();
  ok = out->close() && ok;
  out.reset();
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + (error.empty() ? "write failed" : error));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace rt
