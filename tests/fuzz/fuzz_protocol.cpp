// Any bytes a peer can send: decoding must never crash, and must either fail cleanly or give a
// message that survives a re-encode/decode round trip. A decoded Result's payload then goes
// through what the master does with it (decompress to the rectangle's size, decode pixels).
//
// Structure-aware (issue 26): random bytes rarely pass the FlatBuffers verifier, so the custom
// mutator decodes the input into a message (or starts from a valid message of a random type),
// sets one field to a hostile value (sizes near 2^32 and 2^64, negative and huge rectangles,
// long or empty strings, payloads of the wrong length, zstd frames that lie about their size)
// and encodes it again; one mutation in ten is libFuzzer's own byte-level one.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"

namespace {

using farm::Block;
using namespace farm::proto;

// What the master does with a result's payload, for a rectangle of at most 2^20 pixels (the
// master checks the rectangle against its lease first, so larger ones never get this far).
void consume_result(const Result& r) {
  const uint64_t pixels = static_cast<uint64_t>(r.rect.width) * static_cast<uint64_t>(r.rect.height);
  if (pixels > (uint64_t{1} << 20)) return;
  for (PixelEncoding e : {PixelEncoding::float32, PixelEncoding::half16, PixelEncoding::srgb8}) {
    std::vector<uint8_t> wire = r.pixels;
    if (r.compression == Compression::zstd) {
      auto raw = decompress(r.pixels, pixels * bytes_per_pixel(e));
      if (!raw) continue;
      wire = std::move(*raw);
    }
    std::vector<uint8_t> out;
    (void)decode_pixels(wire, pixels, e, out);
  }
}

// Each field of a message, for the mutator to pick one.
template <typename F> void each_field(Hello& m, F&& f) {
  f(m.protocol_version), f(m.build_id), f(m.worker_name), f(m.threads), f(m.cached_assets), f(m.site_workers);
}
template <typename F> void each_field(Welcome& m, F&& f) {
  f(m.protocol_version), f(m.job_id), f(m.scene_name), f(m.heartbeat_ms), f(m.liveness), f(m.settings.width),
      f(m.settings.height), f(m.settings.spp), f(m.settings.max_depth), f(m.settings.seed);
  for (AssetRef& a : m.assets) f(a.hash), f(a.name), f(a.size);
}
template <typename F> void each_field(AssetRequest& m, F&& f) { f(m.hashes); }
template <typename F> void each_field(AssetData& m, F&& f) { f(m.hash), f(m.data); }
template <typename F> void each_field(WorkRequest& m, F&& f) { f(m.credits), f(m.queued); }
template <typename F> void each_field(Assign& m, F&& f) {
  f(m.job_id), f(m.attempt), f(m.rect.frame), f(m.rect.x), f(m.rect.y), f(m.rect.width), f(m.rect.height);
}
template <typename F> void each_field(Result& m, F&& f) {
  f(m.job_id), f(m.attempt), f(m.rect.frame), f(m.rect.x), f(m.rect.y), f(m.rect.width), f(m.rect.height),
      f(m.raw_size), f(m.pixels), f(m.rays), f(m.render_seconds), f(m.queued_seconds), f(m.fixed_seconds), f(m.compression);
}
template <typename F> void each_field(Cancel& m, F&& f) { f(m.job_id), f(m.attempt); }
template <typename F> void each_field(Heartbeat& m, F&& f) { f(m.sequence); }
template <typename F> void each_field(Recall& m, F&& f) { f(m.job_id), f(m.attempts); }
template <typename F> void each_field(Released& m, F&& f) { f(m.job_id), f(m.attempts); }
template <typename F> void each_field(JobDone& m, F&& f) { f(m.job_id); }
template <typename F> void each_field(Error& m, F&& f) { f(m.message); }
template <typename F> void each_field(ServiceCall& m, F&& f) {
  f(m.protocol_version), f(m.call), f(m.command), f(m.body), f(m.data);
}
template <typename F> void each_field(ServiceReply& m, F&& f) { f(m.call), f(m.body), f(m.data); }
template <typename F> void each_field(BlockFailed& m, F&& f) {
  f(m.job_id), f(m.attempt), f(m.rect.frame), f(m.rect.x), f(m.rect.y), f(m.rect.width), f(m.rect.height), f(m.reason);
}

template <typename T>
T hostile_integer(std::mt19937_64& rng, T current) {
  using L = std::numeric_limits<T>;
  using U = std::make_unsigned_t<T>;
  switch (rng() % 9) {
    case 0: return L::max();
    case 1: return L::min();
    case 2: return static_cast<T>(L::max() - static_cast<T>(rng() % 64));
    case 3: return static_cast<T>(rng() % 3);
    case 4: return static_cast<T>(static_cast<U>(current) + static_cast<U>(1 + rng() % 16));  // wraps, not UB
    case 5: return static_cast<T>(static_cast<U>(current) - static_cast<U>(1 + rng() % 16));
    case 6: return static_cast<T>(uint64_t{1} << (rng() % (8 * sizeof(T))));
    case 7: return static_cast<T>(16384 + rng() % 3 - 1);  // the image side limit
    default: return static_cast<T>(rng());
  }
}

struct Mutate {
  std::mt19937_64& rng;
  Result* result = nullptr;  // set for Result: its pixels may become a lying zstd frame

  template <typename T>
  void operator()(T& v) const {
    if constexpr (std::is_same_v<T, bool>) {
      v = !v;
    } else if constexpr (std::is_integral_v<T>) {
      v = hostile_integer(rng, v);
    } else if constexpr (std::is_floating_point_v<T>) {
      const T values[] = {T(0), T(-1), std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN(),
                          std::numeric_limits<T>::max(), T(1e-300)};
      v = values[rng() % 6];
    } else if constexpr (std::is_same_v<T, std::string>) {
      const std::string values[] = {"", std::string(5000, 'a'), "../../etc/passwd", std::string("a\0b", 3), "/", v + v};
      v = values[rng() % 6];
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
      mutate_bytes(v);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      if (rng() % 2 || v.empty()) v.resize(rng() % 2 ? 0 : 1 + rng() % 200, std::string(64, 'f'));
      else v[rng() % v.size()] = std::string(rng() % 5000, 'x');
    } else if constexpr (std::is_same_v<T, std::vector<uint64_t>>) {
      v.resize(rng() % 2 ? 0 : 1 + rng() % 200000, hostile_integer<uint64_t>(rng, 1));  // past the list limit too
    } else if constexpr (std::is_same_v<T, Compression>) {
      v = v == Compression::none ? Compression::zstd : Compression::none;
    }
  }

  void mutate_bytes(std::vector<uint8_t>& v) const {
    switch (rng() % 4) {
      case 0: v.resize(rng() % 2 ? 0 : v.size() + 1 + rng() % 64, 0x7f); break;
      case 1: v.resize(v.size() / 2); break;
      case 2: {  // a valid zstd frame whose content is not what the rectangle needs
        std::vector<uint8_t> raw(rng() % 4096, static_cast<uint8_t>(rng()));
        v = compress(raw);
        if (result) result->compression = Compression::zstd;
        break;
      }
      default:
        if (!v.empty()) v[rng() % v.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
  }
};

// A valid message of each type, for inputs that do not decode (and as the seed corpus).
Message sample(uint64_t which) {
  switch (which % 16) {
    case 0: return Hello{k_protocol_version, "build", "node1", 2, {"abc"}};
    case 1: {
      Welcome w;
      w.job_id = 7;
      w.scene_name = "scene.toml";
      w.assets = {{"0123", "scene.toml", 100}};
      w.settings = {64, 48, 4, 8, 1, rt::IntegratorKind::path, std::nullopt};
      return w;
    }
    case 2: return AssetRequest{{"0123", "4567"}};
    case 3: return AssetData{"0123", std::vector<uint8_t>(32, 1)};
    case 4: return WorkRequest{3, 2};
    case 5: return Assign{7, 1, Block{1, 0, 0, 16, 16}};
    case 6: {
      Result r;
      r.job_id = 7;
      r.attempt = 1;
      r.rect = Block{1, 8, 8, 4, 4};
      r.encoding = PixelEncoding::srgb8;
      r.pixels.assign(4 * 4 * 3, 128);
      r.raw_size = r.pixels.size();
      if (which & 16) {
        r.pixels = compress(r.pixels);
        r.compression = Compression::zstd;
      }
      return r;
    }
    case 7: return Cancel{7, 1};
    case 8: return Heartbeat{9, true};
    case 9: return JobDone{7};
    case 10: return BlockFailed{7, 1, Block{1, 8, 8, 4, 4}, "povray was killed by signal 9"};
    case 12: return Recall{7, {3, 4, 5}};
    case 13: return Released{7, {4}};
    case 14: return ServiceCall{k_protocol_version, 3, "submit", R"({"name": "a", "priority": 5, "scene": "s.toml"})",
                                std::vector<uint8_t>(16, 2)};
    case 15: return ServiceReply{3, true, R"({"id": 12})", {}};
    default: return Error{ErrorCode::bad_message, "no"};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Decoded d = decode(data, size);
  if (d.message) {
    std::vector<uint8_t> again = encode(*d.message);
    Decoded twice = decode(again.data(), again.size());
    if (!twice.message) __builtin_trap();  // what we decoded, we must be able to send back
    if (const auto* r = std::get_if<Result>(&*d.message)) consume_result(*r);
  }
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 10 == 0) return LLVMFuzzerMutate(data, size, max_size);
  Decoded d = decode(data, size);
  Message m = d.message ? *d.message : sample(rng());
  std::visit(
      [&](auto& msg) {
        Mutate mutate{rng, nullptr};
        if constexpr (std::is_same_v<std::decay_t<decltype(msg)>, Result>) mutate.result = &msg;
        size_t fields = 0;
        each_field(msg, [&](auto&) { ++fields; });
        size_t chosen = rng() % fields, at = 0;
        each_field(msg, [&](auto& field) {
          if (at++ == chosen) mutate(field);
        });
      },
      m);
  std::vector<uint8_t> out = encode(m);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
