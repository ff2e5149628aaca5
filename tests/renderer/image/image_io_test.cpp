#include <doctest/doctest.h>
#include <OpenImageIO/imageio.h>

#include <sys/mount.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>
#include <stdexcept>

#include "test_paths.h"
#include "image/image_io.h"

TEST_SUITE_BEGIN("unit");

namespace {
std::vector<float> gradient(int w, int h) {
  std::vector<float> rgba(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* p = &rgba[4 * (static_cast<size_t>(y) * w + x)];
      p[0] = x / float(w - 1);
      p[1] = y / float(h - 1) * 1.5f;  // over 1: must clamp
      p[2] = (x + y) % 3 == 0 ? -0.5f : 0.25f;  // negative: must clamp
      p[3] = 1.0f;
    }
  return rgba;
}
}  // namespace

TEST_CASE("image output: LDR formats hold the sRGB-encoded, clamped bytes, EXR holds the exact floats") {
  const int w = 13, h = 7;
  auto rgba = gradient(w, h);
  auto dir = test_paths::temp_dir("image_io");
  for (std::string ext : {".png", ".tga", ".ppm", ".exr"}) {
    CAPTURE(ext);
    std::string path = (dir / ("out" + ext)).string();
    rt::write_image(path, w, h, rgba.data());
    auto in = OIIO::ImageInput::open(path);
    REQUIRE(in);
    const auto& spec = in->spec();
    CHECK(spec.width == w);
    CHECK(spec.height == h);
    if (ext == ".exr") {
      REQUIRE(spec.nchannels == 4);
      std::vector<float> back(rgba.size());
      REQUIRE(in->read_image(0, 0, 0, 4, OIIO::TypeDesc::FLOAT, back.data()));
      CHECK(back == rgba);
    } else {
      REQUIRE(spec.nchannels == 3);
      std::vector<uint8_t> back(static_cast<size_t>(w) * h * 3);
      REQUIRE(in->read_image(0, 0, 0, 3, OIIO::TypeDesc::UINT8, back.data()));
      bool all_equal = true;
      for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i)
        for (int c = 0; c < 3; ++c) all_equal &= back[3 * i + c] == rt::linear_to_srgb8(rgba[4 * i + c]);
      CHECK(all_equal);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("image output: sRGB encoding hits the reference points") {
  CHECK(rt::linear_to_srgb8(0.0f) == 0);
  CHECK(rt::linear_to_srgb8(1.0f) == 255);
  CHECK(rt::linear_to_srgb8(0.5f) == 188);  // 0.7354 * 255 = 187.5 -> 188
  CHECK(rt::linear_to_srgb8(0.0031308f) == 10);
  CHECK(rt::linear_to_srgb8(std::nanf("")) == 0);
  CHECK(rt::linear_to_srgb8(-1.0f) == 0);
  CHECK(rt::linear_to_srgb8(7.0f) == 255);
}

TEST_CASE("image output: an unsupported extension is refused before anything is written") {
  CHECK_THROWS_WITH_AS(rt::image_format_for("x.jpg"), doctest::Contains("'.jpg'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(rt::image_format_for("noext"), doctest::Contains("no extension"), std::invalid_argument);
  CHECK(rt::image_format_for("A.PNG") == rt::ImageFormat::png);
  std::vector<float> px(4, 0.5f);
  CHECK_THROWS_AS(rt::write_image("/nonexistent-dir/x.png", 1, 1, px.data()), std::runtime_error);
}

TEST_CASE("image output: a write that fails names the OS reason, not OpenImageIO's 'Could not open file'") {
  const std::filesystem::path dir = test_paths::temp_dir("image_io_readonly");
  struct RemoveAll {  // declared first: runs after the mount is gone
    std::filesystem::path p;
    ~RemoveAll() { std::filesystem::remove_all(p); }
  } remove_all{dir};
  const std::filesystem::path ro = dir / "ro";
  std::filesystem::create_directories(ro);
  // Root ignores a chmod 0555; a read-only file system it cannot.
  if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
    MESSAGE("skipped: cannot mount a read-only tmpfs here (needs root): " << std::strerror(errno));
    return;
  }
  struct Unmount {
    std::filesystem::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{ro};
  const std::vector<float> rgba(4 * 4 * 4, 0.5f);
  const std::string out = (ro / "x.png").string();
  CHECK_THROWS_WITH(rt::write_image(out, 4, 4, rgba.data()),
                    doctest::Contains(("cannot write '" + out + "': Read-only file system").c_str()));
}

TEST_SUITE_END();
