// Every message round-trips; malformed bytes are an error value, never a crash or a throw.
#include <doctest/doctest.h>

#include <random>

#include "protocol/protocol.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;
using namespace farm::proto;

namespace {

std::vector<Message> samples() {
  Hello hello;
  hello.build_id = "abc123";
  hello.worker_name = "node-7";
  hello.threads = 16;
  hello.cached_assets = {"h1", "h2"};
  Welcome welcome;
  welcome.job_id = 42;
  welcome.scene_name = "chess2.toml";
  welcome.assets = {{"h1", "chess2.toml", 1234}, {"h2", "meshes/pawn.ply", 99999}};
  welcome.settings = {800, 600, 4, 6, 99, rt::IntegratorKind::whitted, "top", "POV-Ray 3.7.0.10", {"+A0.3", "Declare=X=1"}};
  welcome.settings.renderer_kind = RendererKind::povray;
  welcome.heartbeat_ms = 500;
  welcome.liveness = 4;
  welcome.pixel_encoding = PixelEncoding::srgb8;
  welcome.compression = Compression::zstd;
  Result result;
  result.job_id = 42;
  result.attempt = 7;
  result.rect = {2, 32, 64, 16, 8};
  result.encoding = PixelEncoding::float32;
  result.raw_size = 16 * 8 * 12;
  result.pixels.assign(16 * 8 * 12, 0x5a);
  result.render_seconds = 0.25;
  result.rays = 123456789;
  result.queued_seconds = 0.01;
  result.next_credits = 3;
  result.next_queued = 2;
  return {hello,
          welcome,
          AssetRequest{{"h1", "h2"}},
          AssetData{"h1", {1, 2, 3, 0, 255}},
          WorkRequest{5},
          Assign{42, 9, {1, 0, 0, 32, 32}},
          result,
          proto::Cancel{42, 9},
          Heartbeat{77, false},
          JobDone{42},
          Error{ErrorCode::incompatible, "protocol 2 != 1"},
          BlockFailed{42, 9, {1, 0, 0, 32, 32}, "blender (the bridge process) was killed by signal 9"}};
}

bool same(const Message& a, const Message& b) {
  if (a.index() != b.index()) return false;
  // Re-encoding is deterministic, so equal bytes mean equal messages.
  return encode(a) == encode(b);
}

}  // namespace

TEST_CASE("protocol: every message type round-trips") {
  for (const Message& m : samples()) {
    CAPTURE(message_name(m));
    std::vector<uint8_t> bytes = encode(m);
    Decoded d = decode(bytes.data(), bytes.size());
    REQUIRE(d.message.has_value());
    CHECK(d.error.empty());
    CHECK(same(*d.message, m));
  }
  // Field-level spot checks, so a codec that dropped fields symmetrically would still fail.
  auto bytes = encode(samples()[6]);
  Decoded dr = decode(bytes.data(), bytes.size());
  const Result& r = std::get<Result>(*dr.message);
  CHECK(r.rect == Block{2, 32, 64, 16, 8});
  CHECK(r.rays == 123456789u);
  CHECK(r.pixels.size() == 16u * 8 * 12);
  CHECK(r.render_seconds == 0.25);
  CHECK(r.next_credits == 3u);  // the sender's next request, carried along
  CHECK(r.next_queued == 2u);
  auto wb = encode(samples()[1]);
  Decoded dw = decode(wb.data(), wb.size());
  const Welcome& w = std::get<Welcome>(*dw.message);
  CHECK(w.assets.size() == 2);
  CHECK(w.assets[1].name == "meshes/pawn.ply");
  CHECK(w.pixel_encoding == PixelEncoding::srgb8);
  // A relay's Hello names its site's workers; a worker's says 0.
  Hello relay = std::get<Hello>(samples()[0]);
  CHECK(relay.site_workers == 0u);
  relay.site_workers = 5;
  auto rb = encode(relay);
  Decoded drelay = decode(rb.data(), rb.size());
  REQUIRE(drelay.message);
  CHECK(std::get<Hello>(*drelay.message).site_workers == 5u);
  JobSettings expected{800, 600, 4, 6, 99, rt::IntegratorKind::whitted, "top", "POV-Ray 3.7.0.10", {"+A0.3", "Declare=X=1"}};
  CHECK_FALSE(w.settings == expected);  // the renderer kind differs
  expected.renderer_kind = RendererKind::povray;
  CHECK(w.settings == expected);
  // Passes since 7, adaptive sampling's settings since 6, the renderer kind since 5, requests riding on results since 4,
  // BlockFailed since 3, typed render settings since 2: older peers are refused at Hello.
  CHECK(k_protocol_version == 7);
}

TEST_CASE("protocol: truncated messages are errors, or (when only padding was cut) the same message") {
  for (const Message& m : samples()) {
    std::string name = message_name(m);
    CAPTURE(name);
    std::vector<uint8_t> bytes = encode(m);
    for (size_t cut = 0; cut < bytes.size(); cut += (cut + 8 < bytes.size() ? 1 + bytes.size() / 97 : 1)) {
      CAPTURE(cut);
      CAPTURE(bytes.size());
      Decoded d = decode(bytes.data(), cut);
      if (d.message) {
        CHECK(same(*d.message, m));  // FlatBuffers may end in alignment padding
      } else {
        CHECK_FALSE(d.error.empty());
      }
    }
  }
  CHECK_FALSE(decode(nullptr, 0).message.has_value());
}

TEST_CASE("protocol: random garbage and bit flips never crash and are mostly rejected") {
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(rng() % 300);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    Decoded d = decode(bytes.data(), bytes.size());
    if (!d.message) {
      ++rejected;
      CHECK_FALSE(d.error.empty());
    }
  }
  CHECK(rejected > 19900);
  // Bit flips in valid messages: whatever decodes must re-encode without trouble.
  for (const Message& m : samples()) {
    std::vector<uint8_t> bytes = encode(m);
    for (int i = 0; i < 2000; ++i) {
      std::vector<uint8_t> copy = bytes;
      copy[rng() % copy.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
      Decoded d = decode(copy.data(), copy.size());
      if (d.message) (void)encode(*d.message);
    }
  }
}

TEST_CASE("protocol: semantic limits are enforced") {
  Limits limits;
  limits.max_image_side = 1000;
  auto bytes = encode(Assign{1, 2, {1, 990, 0, 32, 32}});
  Decoded d = decode(bytes.data(), bytes.size(), limits);
  CHECK_FALSE(d.message);
  CHECK(d.error.find("rect") != std::string::npos);
  auto neg = encode(Assign{1, 2, {1, -5, 0, 4, 4}});
  CHECK_FALSE(decode(neg.data(), neg.size()).message);
  auto zero = encode(Assign{1, 2, {0, 0, 0, 4, 4}});  // frames start at 1
  CHECK_FALSE(decode(zero.data(), zero.size()).message);
  Hello h;
  h.worker_name = std::string(5000, 'x');
  auto long_name = encode(h);
  Decoded dh = decode(long_name.data(), long_name.size());
  CHECK_FALSE(dh.message);
  CHECK(dh.error.find("too long") != std::string::npos);
  h.worker_name = "ok";
  h.threads = 0;
  auto no_threads = encode(h);
  CHECK_FALSE(decode(no_threads.data(), no_threads.size()).message);
  h.threads = 4;
  h.site_workers = 5;  // every site worker has a thread at least
  auto crowded = encode(h);
  CHECK(decode(crowded.data(), crowded.size()).error.find("site workers") != std::string::npos);
  // Render settings a worker could not render are refused at the Welcome, naming the field.
  Welcome w;
  w.scene_name = "s.toml";
  w.settings = {800, 600, 0, 6, 1, rt::IntegratorKind::path, std::nullopt, std::nullopt, {}};
  auto no_spp = encode(w);
  CHECK(decode(no_spp.data(), no_spp.size()).error.find("spp") != std::string::npos);
  w.settings = {20000, 600, 4, 6, 1, rt::IntegratorKind::path, std::nullopt, std::nullopt, {}};
  auto too_wide = encode(w);
  CHECK(decode(too_wide.data(), too_wide.size()).error.find("image size") != std::string::npos);
  w.settings = {800, 600, 4, 6, 1, rt::IntegratorKind::path, std::nullopt, std::nullopt, {}};
  auto fine = encode(w);
  CHECK(decode(fine.data(), fine.size()).message);
  limits = {};
  limits.max_message_bytes = 100;
  auto big = encode(AssetData{"h", std::vector<uint8_t>(1000, 1)});
  CHECK(decode(big.data(), big.size(), limits).error.find("too large") != std::string::npos);
}

TEST_CASE("protocol: a refused Welcome says it was a Welcome and names the value and its bound") {
  // A worker answers a job it cannot take only if it knows the refused message was one (before,
  // it dropped it as any bad message, and the master waited for it forever).
  Welcome w;
  w.job_id = 42;
  w.scene_name = "scene.blend";
  w.settings = {320, 240, 100000, 8, 0, rt::IntegratorKind::path, std::nullopt, std::string("3.4.1"), {}};
  auto bytes = encode(w);
  Decoded d = decode(bytes.data(), bytes.size());
  CHECK_FALSE(d.message);
  CHECK(d.refused_type == "Welcome");
  CHECK(d.error == "malformed Welcome: spp 100000 out of range (1 to 65536)");
  w.settings.spp = 8;
  w.settings.max_depth = 65;
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: max_depth 65 out of range (0 to 64)");
  w.settings.max_depth = 8;
  w.settings.renderer_kind = static_cast<RendererKind>(3);  // a renderer this build does not know
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: unknown renderer");
  // Adaptive sampling's settings travel (since protocol 6), and are bounded.
  w.settings.renderer_kind = RendererKind::native;
  w.settings.noise_threshold = 0.05f;
  w.settings.min_samples = 8;
  bytes = encode(w);
  Decoded adaptive = decode(bytes.data(), bytes.size());
  REQUIRE(adaptive.message);
  CHECK(std::get<Welcome>(*adaptive.message).settings == w.settings);
  w.settings.noise_threshold = 1.5f;
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: noise threshold out of range (0 to 1)");
  w.settings.noise_threshold = 0.05f;
  w.settings.min_samples = -1;
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: min_samples -1 out of range (0 to 65536)");
  w.settings.min_samples = 0;
  w.settings.noise_threshold = 0;
  // Passes travel (since protocol 7); a bit naming no pass is refused.
  w.settings.passes = rt::k_all_passes;
  bytes = encode(w);
  Decoded with_passes = decode(bytes.data(), bytes.size());
  REQUIRE(with_passes.message);
  CHECK(std::get<Welcome>(*with_passes.message).settings.passes == rt::k_all_passes);
  w.settings.passes = rt::k_all_passes + 1;
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: passes name an unknown pass (bits 256)");
  w.settings.passes = 0;
  // A multi-layer output's channels travel by name, within bounds.
  w.settings.channels = {"ViewLayer.Combined.R", "ViewLayer.Combined.G", "ViewLayer.Combined.B", "ViewLayer.Depth.Z"};
  bytes = encode(w);
  Decoded with_channels = decode(bytes.data(), bytes.size());
  REQUIRE(with_channels.message);
  CHECK(std::get<Welcome>(*with_channels.message).settings == w.settings);
  CHECK(carried_floats(w.settings) == 1);
  w.settings.channels.assign(k_max_output_channels + 1, "L.P.X");
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: an output of 129 channels (3 to 128)");
  w.settings.channels = {"ViewLayer.Combined.R", ""};
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: an output of 2 channels (3 to 128)");
  w.settings.channels = {"A.R", "A.G", ""};
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).error == "malformed Welcome: a channel name empty or too long");
  w.settings.channels.clear();
  w.settings.renderer_kind = RendererKind::blender;
  w.settings.max_depth = 65;
  // Other refused messages are named too; bytes that are no message at all have no type.
  auto zero = encode(Assign{1, 2, {0, 0, 0, 4, 4}});
  CHECK(decode(zero.data(), zero.size()).refused_type == "Assign");
  const std::vector<uint8_t> garbage(64, 0xab);
  Decoded g = decode(garbage.data(), garbage.size());
  CHECK_FALSE(g.message);
  CHECK(g.refused_type.empty());
  w.settings.max_depth = 8;
  bytes = encode(w);
  CHECK(decode(bytes.data(), bytes.size()).refused_type.empty());
}

TEST_CASE("protocol: a message at an odd address decodes the same (ZeroMQ frames are not aligned)") {
  for (const Message& m : samples()) {
    std::vector<uint8_t> bytes = encode(m);
    std::vector<uint8_t> shifted(bytes.size() + 1);
    std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
    Decoded d = decode(shifted.data() + 1, bytes.size());
    REQUIRE(d.message.has_value());
    CHECK(same(*d.message, m));
  }
}

TEST_CASE("protocol: a message whose id list is misaligned is read safely (a fuzzer finding)") {
  // Found by fuzz_protocol: a Recall whose 8-byte attempt ids start off an 8-byte boundary; the
  // verifier accepts it and reading the ids in place was undefined behaviour (run under UBSan
  // by tools/test_asan.sh). They are copied out instead.
  const std::string hex =
      "0c00000008000c0007000800080000000000000e0c000000080008000000040008000000040000000c00000008000c00"
      "0700080008000000000000021c000000180020000400180008000c0000001000000000000000140018000000c8ffffff"
      "4000000044000000e80300001c00000002000000000000001000180008000c0010001400000007001000000000000001"
      "40000000300000000400000008000000030000000000610000006200010000000c00000008000c000400080008000000"
      "1000000004000000010000002f000000040000003031323300000000";
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  Decoded d = decode(bytes.data(), bytes.size());
  if (d.message) {
    std::vector<uint8_t> again = encode(*d.message);
    CHECK(decode(again.data(), again.size()).message);
  } else {
    CHECK_FALSE(d.error.empty());
  }
  // And well-formed id lists round-trip, whatever their length.
  Recall r{7, {1, 2, 3, (uint64_t{1} << 63) + 5}};
  auto rb = encode(r);
  Decoded dr = decode(rb.data(), rb.size());
  REQUIRE(dr.message);
  CHECK(std::get<Recall>(*dr.message).attempts == r.attempts);
  auto eb = encode(Released{7, {}});
  Decoded de = decode(eb.data(), eb.size());
  REQUIRE(de.message);
  CHECK(std::get<Released>(*de.message).attempts.empty());
}

TEST_SUITE_END();
