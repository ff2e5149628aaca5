// The master's assembled image: one buffer per frame, in the wire encoding (sRGB bytes for
// LDR outputs, float RGB and the passes for EXR), filled block by block and written at the end.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "protocol/protocol.h"

namespace farm {

class FrameStore {
 public:
  // `channels`: with float pixels, a multi-layer output's channels (proto::JobSettings::channels):
  // each pixel carries the floats of those past the colour's three after its colour.
  // `attributes`: text the written files carry (rt::SceneDesc::output_attributes).
  FrameStore(int width, int height, const std::vector<int>& frames, proto::PixelEncoding encoding,
             std::vector<std::string> channels = {}, std::vector<std::pair<std::string, std::string>> attributes = {});

  // Copies a decoded block (bytes_per_pixel(encoding, pass floats) per pixel, rows of the block)
  // in place.
  void place(const Block& block, const std::vector<uint8_t>& pixels);
  // Writes every frame (`numbered`: name_0001.ext ...); with passes, each one multi-layer EXR.
  // Throws std::runtime_error.
  std::vector<std::string> write_all(const std::string& output_path, bool numbered) const;
  // Linear float RGBA of one frame (for the tile map).
  std::vector<float> rgba(int frame) const;

  proto::PixelEncoding encoding() const { return m_encoding; }

 private:
  void write_layered(const std::string& path, const std::vector<uint8_t>& data) const;
  int m_width, m_height;
  proto::PixelEncoding m_encoding;
  std::vector<std::string> m_channels;
  std::vector<std::pair<std::string, std::string>> m_attributes;
  size_t m_bpp;
  std::map<int, std::vector<uint8_t>> m_frames;
};

// sRGB bytes for PNG/TGA/PPM, float for EXR.
proto::PixelEncoding encoding_for_output(const std::string& output_path);

}  // namespace farm
