#include "image/image_io.h"

#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imageio.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

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

namespace {

// "" if `file` holds exactly `data` once decoded and is safely on disk; otherwise why not.
// `names`: the channels' names when they were given (a reader may list them in another order,
// e.g. OpenEXR sorts them: each read-back channel is compared with the one of its name).
std::string verify_written(const std::string& file, int width, int height, int channels, OIIO::TypeDesc type,
                           const void* data, const std::vector<std::string>& names) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("the written file cannot be opened: ") + std::strerror(errno);
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  ::close(fd);
  if (!synced) return std::string("cannot sync the written file: ") + std::strerror(sync_errno);
  auto in = OIIO::ImageInput::open(file);
  if (!in) return "the written file cannot be read back (disk full?): " + OIIO::geterror();
  const OIIO::ImageSpec& spec = in->spec();
  if (spec.width != width || spec.height != height || spec.nchannels != channels) {
    return "the written file reads back with another size (disk full?)";
  }
  const size_t bytes = static_cast<size_t>(width) * height * channels * type.size();
  std::vector<unsigned char> back(bytes);
  const bool read = in->read_image(0, 0, 0, channels, type, back.data());
  in->close();
  if (!read) return "the written file cannot be read back (disk full?)";
  std::vector<int> order(channels);  // order[j]: which written channel the read-back channel j is
  for (int j = 0; j < channels; ++j) {
    order[j] = j;
    if (names.empty()) continue;
    const std::string name(spec.channel_name(j));
    auto at = std::find(names.begin(), names.end(), name);
    if (at == names.end()) return "the written file reads back with a channel '" + name + "' not written";
    order[j] = static_cast<int>(at - names.begin());
  }
  const size_t value = type.size(), pixels = static_cast<size_t>(width) * height;
  const auto* written = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < pixels; ++i) {
    for (int j = 0; j < channels; ++j) {
      if (std::memcmp(&back[(i * channels + j) * value], &written[(i * channels + order[j]) * value], value) != 0)
        return "the written file reads back different (disk full?)";
    }
  }
  return "";
}

// Writes through a temporary file in the same folder, renamed at the end.
// `names`: the channels' names, or empty for the format's own (R, G, B, A).
void write_via_temp(const std::string& path, int width, int height, int channels, OIIO::TypeDesc type,
                    const void* data, bool is_exr, bool is_ppm, const std::vector<std::string>& names = {},
                    const std::vector<std::pair<std::string, std::string>>& attributes = {}) {
  std::filesystem::path final_path(path);
  // Keep the real extension last: OpenImageIO picks the writer from it.
  std::filesystem::path tmp = final_path.parent_path() /
                              (".tmp." + std::to_string(::getpid()) + "." + final_path.filename().string());
  // OpenImageIO reports a file it cannot create as "Could not open file" without the reason:
  // create the file first so that a read-only or full file system is named (strerror).
  if (int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); fd >= 0) {
    ::close(fd);
  } else {
    throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno) + " (creating '" + tmp.string() + "')");
  }
  auto out = OIIO::ImageOutput::create(tmp.string());
  if (!out) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + OIIO::geterror());
  }
  OIIO::ImageSpec spec(width, height, channels, type);
  if (is_exr) {
    spec.attribute("compression", "zip");
    // OpenEXR stamps the write time otherwise, and the same render must give the same bytes.
    spec.attribute("DateTime", "");
  }
  if (is_ppm) spec.attribute("pnm:binary", 1);
  if (!names.empty()) spec.channelnames = names;
  for (const auto& [name, value] : attributes) spec.attribute(name, value);
  bool ok = out->open(tmp.string(), spec) && out->write_image(type, data);
  std::string error = ok ? "" : out->geterror();
  ok = out->close() && ok;
  out.reset();
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + (error.empty() ? "write failed" : error));
  }
  // Some writers do not notice a full disk (a PNG on a full tmpfs came out empty and "ok"):
  // read the file back and compare before it may replace anything.
  if (std::string why = verify_written(tmp.string(), width, height, channels, type, data, names); !why.empty()) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + why);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + ec.message());
  }
}

}  // namespace

float srgb_to_linear(float c) { return c <= 0.04045f ? c / 12.92f : std::pow((c + 0.055f) / 1.055f, 2.4f); }

void write_image_rgb8(const std::string& path, int width, int height, const uint8_t* rgb) {
  const ImageFormat format = image_format_for(path);
  if (format == ImageFormat::exr) throw std::invalid_argument("8-bit pixels cannot be written as EXR: '" + path + "'");
  write_via_temp(path, width, height, 3, OIIO::TypeDesc::UINT8, rgb, false, format == ImageFormat::ppm);
}

std::vector<uint8_t> encode_png_rgb8(int width, int height, const uint8_t* rgb, bool fast) {
  std::vector<unsigned char> bytes;
  OIIO::Filesystem::IOVecOutput proxy(bytes);
  auto out = OIIO::ImageOutput::create("png");
  if (!out) throw std::runtime_error("cannot encode a PNG: " + OIIO::geterror());
  if (!out->supports("ioproxy") || !out->set_ioproxy(&proxy))
    throw std::runtime_error("cannot encode a PNG in memory: this OpenImageIO's PNG writer takes no IOProxy");
  OIIO::ImageSpec spec(width, height, 3, OIIO::TypeDesc::UINT8);
  if (fast) {
    constexpr int k_png_filter_sub = 0x10;  // libpng's PNG_FILTER_SUB
    spec.attribute("png:compressionLevel", 1);
    spec.attribute("png:filter", k_png_filter_sub);
  }
  bool ok = out->open("live.png", spec) && out->write_image(OIIO::TypeDesc::UINT8, rgb);
  const std::string error = ok ? "" : out->geterror();
  ok = out->close() && ok;
  if (!ok) throw std::runtime_error("cannot encode a PNG: " + (error.empty() ? std::string("write failed") : error));
  return {bytes.begin(), bytes.end()};
}

void write_image(const std::string& path, int width, int height, const float* rgba) {
  const ImageFormat format = image_format_for(path);
  if (format == ImageFormat::exr) {
    write_via_temp(path, width, height, 4, OIIO::TypeDesc::FLOAT, rgba, true, false);
    return;
  }
  const size_t pixels = static_cast<size_t>(width) * height;
  std::vector<uint8_t> bytes(pixels * 3);
  for (size_t i = 0; i < pixels; ++i)
    for (int c = 0; c < 3; ++c) bytes[3 * i + c] = linear_to_srgb8(rgba[4 * i + c]);
  write_image_rgb8(path, width, height, bytes.data());
}

void write_exr_channels(const std::string& path, int width, int height, const float* data,
                        const std::vector<std::string>& names,
                        const std::vector<std::pair<std::string, std::string>>& attributes) {
  if (image_format_for(path) != ImageFormat::exr)
    throw std::invalid_argument("named channels (passes) need an EXR file, not '" + path + "'");
  write_via_temp(path, width, height, static_cast<int>(names.size()), OIIO::TypeDesc::FLOAT, data, true, false, names,
                 attributes);
}

}  // namespace rt
