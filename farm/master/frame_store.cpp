#include "master/frame_store.h"

#include <cmath>
#include <cstring>

#include "base/memory.h"
#include "job/job_spec.h"
#include "image/image_io.h"
#include "protocol/pixel_codec.h"

namespace farm {

FrameStore::FrameStore(int width, int height, const std::vector<int>& frames, proto::PixelEncoding encoding,
                       std::vector<std::string> channels, std::vector<std::pair<std::string, std::string>> attributes)
    : m_width(width),
      m_height(height),
      m_encoding(encoding),
      m_channels(encoding == proto::PixelEncoding::float32 && channels.size() > 3 ? std::move(channels)
                                                                                 : std::vector<std::string>{}),
      m_attributes(std::move(attributes)),
      m_bpp(proto::bytes_per_pixel(encoding, m_channels.empty() ? 0 : static_cast<int>(m_channels.size() - 3))) {
  const std::string kind = encoding == proto::PixelEncoding::srgb8 ? "8-bit sRGB RGB"
                           : m_channels.empty()                   ? "float RGB"
                                                                  : std::to_string(m_channels.size()) + " float channels";
  for (int f : frames) {
    const std::string what = frames.size() == 1 ? "the " + image_size_text(width, height) + " image being assembled"
                                                : "frame " + std::to_string(f) + "'s " + image_size_text(width, height) +
                                                      " image being assembled (" + std::to_string(frames.size()) + " frames)";
    allocate_filled(m_frames[f], static_cast<size_t>(width) * height * m_bpp, uint8_t{0}, what, kind);
  }
}

void FrameStore::place(const Block& b, const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t>& frame = m_frames.at(b.frame);
  const size_t row = static_cast<size_t>(b.width) * m_bpp;
  for (int y = 0; y < b.height; ++y) {
    std::memcpy(&frame[(static_cast<size_t>(b.y + y) * m_width + b.x) * m_bpp], &pixels[y * row], row);
  }
}

std::vector<std::string> FrameStore::write_all(const std::string& output_path, bool numbered) const {
  std::vector<std::string> written;
  for (const auto& [f, data] : m_frames) {
    std::string path = output_path_for_frame(output_path, f, numbered);
    if (m_encoding == proto::PixelEncoding::srgb8) {
      rt::write_image_rgb8(path, m_width, m_height, data.data());
    } else if (!m_channels.empty()) {
      write_layered(path, data);
    } else {
      rt::write_image(path, m_width, m_height, rgba(f).data());
    }
    written.push_back(path);
  }
  return written;
}

void FrameStore::write_layered(const std::string& path, const std::vector<uint8_t>& data) const {
  // A pixel on the wire is its channels' floats in their order: the file's layout already.
  std::vector<float> layered;
  allocate_filled(layered, data.size() / sizeof(float), 0.0f,
                  "the " + image_size_text(m_width, m_height) + " frame's channels (to write it)", "float channels");
  std::memcpy(layered.data(), data.data(), layered.size() * sizeof(float));
  rt::write_exr_channels(path, m_width, m_height, layered.data(), m_channels, m_attributes);
}

std::vector<float> FrameStore::rgba(int frame) const {
  const std::vector<uint8_t>& data = m_frames.at(frame);
  const size_t n = static_cast<size_t>(m_width) * m_height;
  std::vector<float> out;
  allocate_filled(out, n * 4, 1.0f, "a float copy of the " + image_size_text(m_width, m_height) + " frame " + std::to_string(frame) + " (to write it or its tile map)",
                  "float RGBA");
  for (size_t i = 0; i < n; ++i) {
    if (m_encoding == proto::PixelEncoding::srgb8) {
      for (int c = 0; c < 3; ++c) {
        out[4 * i + c] = rt::srgb_to_linear(data[3 * i + c] / 255.0f);
      }
    } else {
      std::memcpy(&out[4 * i], &data[m_bpp * i], 12);
    }
  }
  return out;
}

proto::PixelEncoding encoding_for_output(const std::string& output_path) {
  return rt::image_format_for(output_path) == rt::ImageFormat::exr ? proto::PixelEncoding::float32
                                                                    : proto::PixelEncoding::srgb8;
}

}  // namespace farm
