#include "protocol/protocol.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <type_traits>

#include "base/limits.h"
#include "messages_generated.h"

namespace farm::proto {

namespace {

namespace w = farm::wire;
static_assert(static_cast<int>(rt::IntegratorKind::whitted) == static_cast<int>(w::Integrator::Whitted) &&
                  static_cast<int>(rt::IntegratorKind::path) == static_cast<int>(w::Integrator::Path),
              "the wire's integrator values are the renderer's");
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// ---------------------------------------------------------------- encoding

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> strings(FlatBufferBuilder& b, const std::vector<std::string>& v) {
  return b.CreateVectorOfStrings(v);
}

w::Rect rect_of(const Block& r) { return w::Rect(r.frame, r.x, r.y, r.width, r.height); }

std::pair<w::Body, Offset<void>> build(FlatBufferBuilder& b, const Message& m) {
  return std::visit(
      Overloaded{
          [&](const Hello& x) -> std::pair<w::Body, Offset<void>> {
            auto cached = strings(b, x.cached_assets);
            auto build_id = b.CreateString(x.build_id);
            auto name = b.CreateString(x.worker_name);
            return {w::Body::Hello, w::CreateHello(b, x.protocol_version, build_id, name, x.threads, cached, x.site_workers).Union()};
          },
          [&](const Welcome& x) -> std::pair<w::Body, Offset<void>> {
            std::vector<Offset<w::AssetRef>> assets;
            for (const AssetRef& a : x.assets) {
              assets.push_back(w::CreateAssetRef(b, b.CreateString(a.hash), b.CreateString(a.name), a.size));
            }
            auto assets_v = b.CreateVector(assets);
            auto scene = b.CreateString(x.scene_name);
            const JobSettings& s = x.settings;
            auto camera = s.camera ? b.CreateString(*s.camera) : Offset<flatbuffers::String>();
            auto renderer = s.renderer ? b.CreateString(*s.renderer) : Offset<flatbuffers::String>();
            auto options = s.renderer_options.empty() ? Offset<flatbuffers::Vector<Offset<flatbuffers::String>>>()
                                                      : b.CreateVectorOfStrings(s.renderer_options);
            auto channels = s.channels.empty() ? Offset<flatbuffers::Vector<Offset<flatbuffers::String>>>()
                                               : b.CreateVectorOfStrings(s.channels);
            auto settings = w::CreateRenderSettings(b, s.width, s.height, s.spp, s.max_depth, s.seed,
                                                    s.integrator == rt::IntegratorKind::whitted ? w::Integrator::Whitted
                                                                                                : w::Integrator::Path,
                                                    camera, renderer, options, s.renderer_memory_mib, s.renderer_seconds,
                                                    static_cast<w::Renderer>(s.renderer_kind), s.noise_threshold,
                                                    s.min_samples, s.passes, channels);
            return {w::Body::Welcome,
                    w::CreateWelcome(b, x.protocol_version, x.job_id, scene, assets_v, x.heartbeat_ms, x.liveness,
                                     static_cast<w::PixelEncoding>(x.pixel_encoding),
                                     static_cast<w::Compression>(x.compression), settings)
                        .Union()};
          },
          [&](const AssetRequest& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::AssetRequest, w::CreateAssetRequest(b, strings(b, x.hashes)).Union()};
          },
          [&](const AssetData& x) -> std::pair<w::Body, Offset<void>> {
            auto hash = b.CreateString(x.hash);
            auto data = b.CreateVector(x.data);
            return {w::Body::AssetData, w::CreateAssetData(b, hash, data).Union()};
          },
          [&](const WorkRequest& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::WorkRequest, w::CreateWorkRequest(b, x.credits, x.queued).Union()};
          },
          [&](const Assign& x) -> std::pair<w::Body, Offset<void>> {
            w::Rect r = rect_of(x.rect);
            return {w::Body::Assign, w::CreateAssign(b, x.job_id, x.attempt, &r).Union()};
          },
          [&](const Result& x) -> std::pair<w::Body, Offset<void>> {
            auto pixels = b.CreateVector(x.pixels);
            w::Rect r = rect_of(x.rect);
            return {w::Body::Result,
                    w::CreateResult(b, x.job_id, x.attempt, &r, static_cast<w::PixelEncoding>(x.encoding),
                                    static_cast<w::Compression>(x.compression), x.raw_size, pixels, x.render_seconds,
                                    x.rays, x.queued_seconds, x.fixed_seconds, x.next_credits, x.next_queued)
                        .Union()};
          },
          [&](const Recall& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::Recall, w::CreateRecall(b, x.job_id, b.CreateVector(x.attempts)).Union()};
          },
          [&](const Released& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::Released, w::CreateReleased(b, x.job_id, b.CreateVector(x.attempts)).Union()};
          },
          [&](const Cancel& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::Cancel, w::CreateCancel(b, x.job_id, x.attempt).Union()};
          },
          [&](const Heartbeat& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::Heartbeat, w::CreateHeartbeat(b, x.sequence, x.ping).Union()};
          },
          [&](const JobDone& x) -> std::pair<w::Body, Offset<void>> {
            return {w::Body::JobDone, w::CreateJobDone(b, x.job_id).Union()};
          },
          [&](const Error& x) -> std::pair<w::Body, Offset<void>> {
            auto msg = b.CreateString(x.message);
            return {w::Body::Error, w::CreateError(b, static_cast<w::ErrorCode>(x.code), msg).Union()};
          },
          [&](const ServiceCall& x) -> std::pair<w::Body, Offset<void>> {
            auto command = b.CreateString(x.command);
            auto body = b.CreateString(x.body);
            auto data = b.CreateVector(x.data);
            return {w::Body::ServiceCall, w::CreateServiceCall(b, x.protocol_version, x.call, command, body, data).Union()};
          },
          [&](const ServiceReply& x) -> std::pair<w::Body, Offset<void>> {
            auto body = b.CreateString(x.body);
            auto data = b.CreateVector(x.data);
            return {w::Body::ServiceReply, w::CreateServiceReply(b, x.call, x.ok, body, data).Union()};
          },
          [&](const BlockFailed& x) -> std::pair<w::Body, Offset<void>> {
            auto reason = b.CreateString(x.reason);
            w::Rect r = rect_of(x.rect);
            return {w::Body::BlockFailed, w::CreateBlockFailed(b, x.job_id, x.attempt, &r, reason).Union()};
          },
      },
      m);
}

// ---------------------------------------------------------------- decoding

// Thrown only inside decode() and caught there: a compact way to bail out of nested reads.
struct Malformed {
  std::string what;
};

class Reader {
 public:
  explicit Reader(const Limits& limits) : m_limits(limits) {}

  std::string str(const flatbuffers::String* s, const char* field, bool required = false) const {
    if (!s) {
      if (required) throw Malformed{std::string("missing ") + field};
      return {};
    }
    if (s->size() > m_limits.max_string_bytes) throw Malformed{std::string(field) + " is too long"};
    return s->str();
  }

  // A service call's JSON: longer than other strings may be, bounded on its own.
  std::string body_text(const flatbuffers::String* s) const {
    if (!s) return {};
    if (s->size() > m_limits.max_body_bytes) throw Malformed{"body is too long"};
    return s->str();
  }

  std::vector<std::string> strs(const flatbuffers::Vector<Offset<flatbuffers::String>>* v, const char* field) const {
    std::vector<std::string> out;
    if (!v) return out;
    if (v->size() > m_limits.max_list_items) throw Malformed{std::string(field) + " has too many items"};
    for (const auto* s : *v) out.push_back(str(s, field, true));
    return out;
  }

  std::vector<uint64_t> ids(const flatbuffers::Vector<uint64_t>* v, const char* field) const {
    std::vector<uint64_t> out;
    if (!v) return out;
    if (v->size() > m_limits.max_list_items) throw Malformed{std::string(field) + " has too many items"};
    // memcpy, not the accessor: the verifier checks the vector's length field, not that its
    // 8-byte elements are aligned, and a hostile sender can misalign them (UBSan found it).
    out.resize(v->size());
    if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(uint64_t));
    for (uint64_t& id : out) id = flatbuffers::EndianScalar(id);
    return out;
  }

  Block rect(const w::Rect* r) const {
    if (!r) throw Malformed{"missing rect"};
    Block b{r->frame(), r->x(), r->y(), r->width(), r->height()};
    const int side = m_limits.max_image_side;
    if (b.frame < 1 || b.x < 0 || b.y < 0 || b.width < 1 || b.height < 1 || b.x > side - b.width ||
        b.y > side - b.height) {
      throw Malformed{"rect out of range"};
    }
    return b;
  }

  JobSettings settings(const w::RenderSettings* x) const {
    if (!x) throw Malformed{"missing render settings"};
    JobSettings s;
    s.width = x->width();
    s.height = x->height();
    if (s.width < 1 || s.height < 1 || s.width > m_limits.max_image_side || s.height > m_limits.max_image_side ||
        static_cast<long long>(s.width) * s.height > rt::k_max_image_pixels)
      throw Malformed{"image size " + std::to_string(s.width) + "x" + std::to_string(s.height) + " out of range (sides 1 to " +
                      std::to_string(m_limits.max_image_side) + ", at most " + std::to_string(rt::k_max_image_pixels) +
                      " pixels)"};
    s.spp = x->spp();
    if (s.spp < 1 || s.spp > rt::k_max_spp)
      throw Malformed{"spp " + std::to_string(s.spp) + " out of range (1 to " + std::to_string(rt::k_max_spp) + ")"};
    s.max_depth = x->max_depth();
    if (s.max_depth < 0 || s.max_depth > rt::k_max_bounces)
      throw Malformed{"max_depth " + std::to_string(s.max_depth) + " out of range (0 to " + std::to_string(rt::k_max_bounces) +
                      ")"};
    s.seed = x->seed();
    s.integrator = enumeration<rt::IntegratorKind>(static_cast<uint8_t>(x->integrator()), 1, "integrator");
    if (x->camera()) s.camera = str(x->camera(), "camera", true);
    if (x->renderer()) s.renderer = str(x->renderer(), "renderer", true);
    if (const auto* options = x->renderer_options()) {
      if (options->size() > 64) throw Malformed{"more than 64 renderer options"};
      for (const flatbuffers::String* o : *options) s.renderer_options.push_back(str(o, "renderer option", true));
    }
    s.renderer_memory_mib = x->renderer_memory_mib();
    if (s.renderer_memory_mib > k_max_renderer_memory_mib) throw Malformed{"renderer memory limit out of range"};
    s.renderer_seconds = x->renderer_seconds();
    if (s.renderer_seconds > k_max_renderer_seconds) throw Malformed{"renderer time limit out of range"};
    s.renderer_kind = enumeration<RendererKind>(static_cast<uint8_t>(x->renderer_kind()), 2, "renderer");
    s.noise_threshold = x->noise_threshold();
    if (!(s.noise_threshold >= 0 && s.noise_threshold <= 1)) throw Malformed{"noise threshold out of range (0 to 1)"};
    s.min_samples = x->min_samples();
    if (s.min_samples < 0 || s.min_samples > rt::k_max_spp)
      throw Malformed{"min_samples " + std::to_string(s.min_samples) + " out of range (0 to " + std::to_string(rt::k_max_spp) +
                      ")"};
    s.passes = x->passes();
    if (s.passes & ~rt::k_all_passes) throw Malformed{"passes name an unknown pass (bits " + std::to_string(s.passes) + ")"};
    if (const auto* channels = x->channels()) {
      if (channels->size() > k_max_output_channels || channels->size() == 1 || channels->size() == 2)
        throw Malformed{"an output of " + std::to_string(channels->size()) + " channels (3 to " +
                        std::to_string(k_max_output_channels) + ")"};
      for (const auto* c : *channels) {
        if (!c || c->size() == 0 || c->size() > k_max_channel_name) throw Malformed{"a channel name empty or too long"};
        s.channels.push_back(c->str());
      }
    }
    return s;
  }

  template <class E>
  E enumeration(uint8_t raw, uint8_t max_value, const char* field) const {
    if (raw > max_value) throw Malformed{std::string("unknown ") + field};
    return static_cast<E>(raw);
  }

  Message body(const w::Envelope* env) const {
    // The verifier accepts a union type with no value (and unknown types, for forward
    // compatibility); both would leave body_as_*() returning null.
    if (!env->body()) throw Malformed{"missing body"};
    switch (env->body_type()) {
      case w::Body::Hello: {
        const auto* x = env->body_as_Hello();
        Hello h;
        h.protocol_version = x->protocol_version();
        h.build_id = str(x->build_id(), "build_id");
        h.worker_name = str(x->worker_name(), "worker_name");
        h.threads = x->threads();
        if (h.threads < 1 || h.threads > k_max_threads) throw Malformed{"threads out of range"};
        h.site_workers = x->site_workers();
        if (h.site_workers > h.threads) throw Malformed{"more site workers than threads"};
        h.cached_assets = strs(x->cached_assets(), "cached_assets");
        return h;
      }
      case w::Body::Welcome: {
        const auto* x = env->body_as_Welcome();
        Welcome m;
        m.protocol_version = x->protocol_version();
        m.job_id = x->job_id();
        m.scene_name = str(x->scene_name(), "scene_name", true);
        if (x->assets()) {
          if (x->assets()->size() > m_limits.max_list_items) throw Malformed{"too many assets"};
          for (const auto* a : *x->assets()) {
            m.assets.push_back({str(a->hash(), "asset hash", true), str(a->name(), "asset name", true), a->size()});
          }
        }
        m.settings = settings(x->settings());
        m.heartbeat_ms = x->heartbeat_ms();
        m.liveness = x->liveness();
        m.pixel_encoding = enumeration<PixelEncoding>(static_cast<uint8_t>(x->pixel_encoding()), 2, "pixel encoding");
        m.compression = enumeration<Compression>(static_cast<uint8_t>(x->compression()), 1, "compression");
        return m;
      }
      case w::Body::AssetRequest:
        return AssetRequest{strs(env->body_as_AssetRequest()->hashes(), "hashes")};
      case w::Body::AssetData: {
        const auto* x = env->body_as_AssetData();
        AssetData a;
        a.hash = str(x->hash(), "hash", true);
        if (x->data()) a.data.assign(x->data()->begin(), x->data()->end());
        return a;
      }
      case w::Body::WorkRequest: {
        uint32_t credits = env->body_as_WorkRequest()->credits();
        if (credits > 65536) throw Malformed{"credits out of range"};
        uint32_t queued = env->body_as_WorkRequest()->queued();
        if (queued > 1u << 24) throw Malformed{"queued out of range"};
        return WorkRequest{credits, queued};
      }
      case w::Body::Assign: {
        const auto* x = env->body_as_Assign();
        return Assign{x->job_id(), x->attempt(), rect(x->rect())};
      }
      case w::Body::Result: {
        const auto* x = env->body_as_Result();
        Result r;
        r.job_id = x->job_id();
        r.attempt = x->attempt();
        r.rect = rect(x->rect());
        r.encoding = enumeration<PixelEncoding>(static_cast<uint8_t>(x->encoding()), 2, "pixel encoding");
        r.compression = enumeration<Compression>(static_cast<uint8_t>(x->compression()), 1, "compression");
        r.raw_size = x->raw_size();
        if (x->pixels()) r.pixels.assign(x->pixels()->begin(), x->pixels()->end());
        r.render_seconds = x->render_seconds();
        r.rays = x->rays();
        r.queued_seconds = x->queued_seconds();
        r.fixed_seconds = x->fixed_seconds();
        r.next_credits = x->next_credits();
        r.next_queued = x->next_queued();
        return r;
      }
      case w::Body::Cancel: {
        const auto* x = env->body_as_Cancel();
        return Cancel{x->job_id(), x->attempt()};
      }
      case w::Body::Recall: {
        const auto* x = env->body_as_Recall();
        return Recall{x->job_id(), ids(x->attempts(), "attempts")};
      }
      case w::Body::Released: {
        const auto* x = env->body_as_Released();
        return Released{x->job_id(), ids(x->attempts(), "attempts")};
      }
      case w::Body::Heartbeat: {
        const auto* x = env->body_as_Heartbeat();
        return Heartbeat{x->sequence(), x->ping()};
      }
      case w::Body::JobDone:
        return JobDone{env->body_as_JobDone()->job_id()};
      case w::Body::Error: {
        const auto* x = env->body_as_Error();
        return Error{enumeration<ErrorCode>(static_cast<uint8_t>(x->code()), 3, "error code"),
                     str(x->message(), "message")};
      }
      case w::Body::BlockFailed: {
        const auto* x = env->body_as_BlockFailed();
        return BlockFailed{x->job_id(), x->attempt(), rect(x->rect()), str(x->reason(), "reason")};
      }
      case w::Body::ServiceCall: {
        const auto* x = env->body_as_ServiceCall();
        ServiceCall c{x->protocol_version(), x->call(), str(x->command(), "command", true), body_text(x->body()), {}};
        if (x->data()) c.data.assign(x->data()->begin(), x->data()->end());
        return c;
      }
      case w::Body::ServiceReply: {
        const auto* x = env->body_as_ServiceReply();
        ServiceReply r{x->call(), x->ok(), body_text(x->body()), {}};
        if (x->data()) r.data.assign(x->data()->begin(), x->data()->end());
        return r;
      }
      default:
        throw Malformed{"unknown message type " + std::to_string(static_cast<int>(env->body_type()))};
    }
  }

 private:
  const Limits& m_limits;
};

}  // namespace

std::vector<uint8_t> encode(const Message& message) {
  FlatBufferBuilder b(256);
  auto [type, body] = build(b, message);
  b.Finish(w::CreateEnvelope(b, type, body));
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

Decoded decode(const uint8_t* data, size_t size, const Limits& limits) {
  Decoded out;
  if (!data || size < 8) {
    out.error = "message too short (" + std::to_string(size) + " bytes)";
    return out;
  }
  if (size > limits.max_message_bytes) {
    out.error = "message too large (" + std::to_string(size) + " bytes)";
    return out;
  }
  // FlatBuffers reads 4- and 8-byte fields in place, which needs an aligned buffer; ZeroMQ
  // frames can start at any address, so an unaligned frame is copied first.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize((size + 7) / 8);
    std::memcpy(aligned.data(), data, size);
    data = reinterpret_cast<const uint8_t*>(aligned.data());
  }
  // The verifier checks every offset, vector length and string terminator against the buffer
  // before anything is read; depth and table counts bound the work a hostile buffer can cause.
  flatbuffers::Verifier verifier(data, size, /*max_depth=*/16, /*max_tables=*/1000000);
  if (!w::VerifyEnvelopeBuffer(verifier)) {
    out.error = "malformed message (failed verification)";
    return out;
  }
  const w::Envelope* env = w::GetEnvelope(data);
  try {
    out.message = Reader(limits).body(env);
  } catch (const Malformed& m) {
    // EnumNameBody would index past its table for an unknown type: name it ourselves.
    auto type = static_cast<unsigned>(env->body_type());
    std::string name = type >= 1 && type <= static_cast<unsigned>(w::Body::MAX) ? w::EnumNamesBody()[type] : "message";
    out.error = "malformed " + name + ": " + m.what;
    if (name != "message") out.refused_type = name;
  } catch (const std::exception& e) {  // e.g. allocation failure on a huge but valid vector
    out.error = std::string("cannot decode message: ") + e.what();
  }
  return out;
}

const char* message_name(const Message& message) {
  static const char* const names[] = {"Hello",   "Welcome", "AssetRequest", "AssetData", "WorkRequest", "Assign",
                                      "Result",  "Cancel",  "Heartbeat",    "JobDone",   "Error",
                                      "BlockFailed", "Recall", "Released", "ServiceCall", "ServiceReply"};
  return names[message.index()];
}

}  // namespace farm::proto
