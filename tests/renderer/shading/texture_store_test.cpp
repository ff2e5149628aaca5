// Image textures held in memory and read through the tile cache give the same bits, follow
// OpenImageIO's texel convention, and a budget too small for a scene's textures changes no
// pixel.
#include <doctest/doctest.h>

#include <OpenImageIO/imageio.h>
#include <OpenImageIO/texture.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>

#include "test_paths.h"
#include "renderer/render_helpers.h"
#include "world/scene.h"
#include "shading/texture.h"

TEST_SUITE_BEGIN("unit");

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(test_paths::temp_dir(name)) {}
  ~TempDir() { fs::remove_all(path); }
};

// A width x height image of `channels` channels in `type` with values that vary per texel
// and channel (so a wrong texel or channel shows).
void write_image(const fs::path& path, int width, int height, int channels, OIIO::TypeDesc type) {
  std::vector<float> pixels(static_cast<size_t>(width) * height * channels);
  std::mt19937 rng(static_cast<unsigned>(width * 131 + height * 7 + channels));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (float& v : pixels) v = u(rng);
  auto out = OIIO::ImageOutput::create(path.string());
  REQUIRE(out);
  OIIO::ImageSpec spec(width, height, channels, type);
  REQUIRE(out->open(path.string(), spec));
  REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, pixels.data()));
  out->close();
}

rt::TextureDesc image_desc(const fs::path& path, rt::TextureWrap wrap) {
  rt::TextureDesc d;
  d.kind = rt::TextureKind::image;
  d.path = path.string();
  d.wrap_s = d.wrap_t = wrap;
  return d;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The process-wide OpenImageIO TextureSystem used as the reference for the convention (kept
// for the process, like the renderer's own cache).
OIIO::TextureSystem* reference_system() {
  static OIIO::TextureSystem* ts = [] {
    OIIO::TextureSystem* t = OIIO::TextureSystem::create(false);
    t->attribute("autotile", 64);
    t->attribute("accept_untiled", 1);
    t->attribute("accept_unmipped", 1);
    return t;
  }();
  return ts;
}

OIIO::TextureOpt::Wrap oiio_wrap(rt::TextureWrap w) {
  switch (w) {
    case rt::TextureWrap::clamp: return OIIO::TextureOpt::WrapClamp;
    case rt::TextureWrap::mirror: return OIIO::TextureOpt::WrapMirror;
    default: return OIIO::TextureOpt::WrapPeriodic;
  }
}

struct Case {
  const char* file;
  int channels;
  OIIO::TypeDesc type;
};

}  // namespace

TEST_CASE("textures: in memory and through the tile cache, lookups and gradients are bit for bit the same") {
  TempDir dir("texture_holders");
  const Case cases[] = {{"rgb8.png", 3, OIIO::TypeDesc::UINT8},
                        {"ga16.png", 2, OIIO::TypeDesc::UINT16},
                        {"rgba_float.exr", 4, OIIO::TypeDesc::FLOAT},
                        {"grey_half.exr", 1, OIIO::TypeDesc::HALF}};
  for (const Case& c : cases) write_image(dir.path / c.file, 13, 7, c.channels, c.type);

  for (rt::TextureWrap wrap : {rt::TextureWrap::repeat, rt::TextureWrap::clamp, rt::TextureWrap::mirror}) {
    rt::TextureStore in_memory(1024);
    rt::TextureStore tiled(0);  // no budget: every image stays in the tile cache
    for (const Case& c : cases) {
      in_memory.add(image_desc(dir.path / c.file, wrap));
      tiled.add(image_desc(dir.path / c.file, wrap));
    }
    in_memory.decode_resident();
    tiled.decode_resident();
    for (int i = 0; i < static_cast<int>(in_memory.size()); ++i) {
      CHECK(in_memory.is_resident(i));
      CHECK_FALSE(tiled.is_resident(i));
    }
    // 13x7 texels in 4x2 tiles of 16, RGB padded to RGBA: 128 texels of 4 + 2x2 + 4x4 + 4 bytes.
    CHECK(in_memory.resident_bytes() == 128 * (4 + 2 * 2 + 4 * 4 + 4));
    CHECK(tiled.resident_bytes() == 0);

    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2.5f, 3.5f);
    int differing = 0;
    for (int n = 0; n < 400; ++n) {
      rt::HitUvs uvs{{u(rng), u(rng)}, {0, 0}};
      for (int i = 0; i < static_cast<int>(in_memory.size()); ++i) {
        rt::TextureRef ref;
        ref.texture = i;
        rt::TexelValue a = in_memory.raw(ref, {}, uvs), b = tiled.raw(ref, {}, uvs);
        rt::TextureStore::Gradient ga = in_memory.first_channel_gradient(ref, uvs);
        rt::TextureStore::Gradient gb = tiled.first_channel_gradient(ref, uvs);
        bool same = same_bits(a.rgb.x, b.rgb.x) && same_bits(a.rgb.y, b.rgb.y) && same_bits(a.rgb.z, b.rgb.z) &&
                    same_bits(a.alpha, b.alpha) && same_bits(ga.value, gb.value) && same_bits(ga.d_du, gb.d_du) &&
                    same_bits(ga.d_dv, gb.d_dv);
        if (!same) ++differing;
      }
    }
    CHECK(differing == 0);
  }
}

TEST_CASE("textures: lookups follow OpenImageIO's bilinear convention for every wrap mode") {
  TempDir dir("texture_convention");
  write_image(dir.path / "rgb.exr", 9, 6, 3, OIIO::TypeDesc::FLOAT);
  for (rt::TextureWrap wrap : {rt::TextureWrap::repeat, rt::TextureWrap::clamp, rt::TextureWrap::mirror}) {
    rt::TextureStore store(1024);
    store.add(image_desc(dir.path / "rgb.exr", wrap));
    store.decode_resident();
    REQUIRE(store.is_resident(0));
    OIIO::TextureSystem* ts = reference_system();
    OIIO::TextureOpt opt;
    opt.swrap = opt.twrap = oiio_wrap(wrap);
    opt.mipmode = OIIO::TextureOpt::MipModeNoMIP;
    opt.interpmode = OIIO::TextureOpt::InterpBilinear;
    OIIO::ustring name((dir.path / "rgb.exr").string());
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> u(-1.7f, 2.7f);
    double worst = 0, worst_gradient = 0;
    for (int n = 0; n < 300; ++n) {
      float s = u(rng), t = u(rng);
      float want[3], d_ds[3], d_dt[3];
      REQUIRE(ts->texture(name, opt, s, t, 0, 0, 0, 0, 3, want, d_ds, d_dt));
      rt::TexelValue got = store.raw_at_st(0, {s, t});
      worst = std::max({worst, std::abs(double(got.rgb.x) - want[0]), std::abs(double(got.rgb.y) - want[1]),
                        std::abs(double(got.rgb.z) - want[2])});
      // The gradient in uv: s = u, t = 1 - v for an untransformed texture.
      rt::HitUvs uvs{{s, 1 - t}, {0, 0}};
      rt::TextureRef ref;
      ref.texture = 0;
      rt::TextureStore::Gradient g = store.first_channel_gradient(ref, uvs);
      worst_gradient = std::max({worst_gradient, std::abs(double(g.d_du) - d_ds[0]), std::abs(double(g.d_dv) + d_dt[0])});
    }
    CHECK(worst < 1e-5);
    CHECK(worst_gradient < 1e-3);
  }
}

TEST_CASE("textures: DamagedHelmet renders the same bytes with its textures in memory and in a 16 MiB tile cache" * doctest::test_suite("slow")) {
  if (!test_paths::have_shared_scenes()) {
    MESSAGE("skipped: ../shared/scenes is absent");
    return;
  }
  rt::SceneDesc desc = rt::parse_scene_file(test_paths::shared_scenes() + "/damaged-helmet/DamagedHelmet.gltf");
  desc.settings.width = desc.settings.height = 32;
  desc.settings.spp = 2;
  rt::LoadOptions big, small;
  small.texture_cache_mb = 16;  // the CLI's minimum: one of the four 2048^2 maps fits in memory
  auto a = rt::load_scene(desc, big);
  auto b = rt::load_scene(desc, small);
  int resident_a = 0, resident_b = 0;
  for (int i = 0; i < static_cast<int>(a->textures.size()); ++i) {
    resident_a += a->textures.is_resident(i);
    resident_b += b->textures.is_resident(i);
  }
  CHECK(resident_a == 4);
  CHECK(resident_b < 4);
  std::vector<float> image_a = test_render::render_full(*a), image_b = test_render::render_full(*b);
  CHECK(std::memcmp(image_a.data(), image_b.data(), image_a.size() * sizeof(float)) == 0);
}

TEST_SUITE_END();
