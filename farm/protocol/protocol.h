// The farm's protocol: message types and their encoding to bytes and back. This module only
// (de)serialises; it knows nothing of sockets or scheduling. FlatBuffers provides the codec
// and the verifier; every size and count is also checked here against Limits, and a
// malformed message is returned as an error value, never thrown.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "scene/render_settings.h"
#include "scheduler/block.h"
#include "scheduler/ids.h"

namespace farm::proto {

// Bump when a change breaks old peers; Hello/Welcome carry it and mismatches are refused.
// 2: render settings travel as a typed table (RenderSettings), no longer as "key=value" strings.
// 3: BlockFailed. 4: a Result carries its sender's next request (a peer of 3 would ignore it, and
// its workers would ask only once per heartbeat). 5: the job's settings say which renderer
// renders it (RendererKind); a worker of 4 would read it off the scene's name. 6: adaptive
// sampling's settings. 7: passes (a result's pixels then carry them after the colour).
constexpr uint32_t k_protocol_version = 7;

enum class PixelEncoding : uint8_t { float32 = 0, half16 = 1, srgb8 = 2 };
enum class Compression : uint8_t { none = 0, zstd = 1 };
enum class ErrorCode : uint8_t { incompatible = 0, bad_message = 1, scene_failed = 2, internal = 3 };
// The renderer of a job: ours, Debian's povray per block, or Blender Cycles (backend/scene_kind.h).
enum class RendererKind : uint8_t { native = 0, povray = 1, blender = 2 };

struct Hello {
  uint32_t protocol_version = k_protocol_version;
  std::string build_id;
  std::string worker_name;
  uint32_t threads = 1;
  std::vector<std::string> cached_assets;
  // 0 for a worker; a relay (farm relay) says how many workers its site has, which share its
  // `threads` (the master's policy covers the round trip for each of them).
  uint32_t site_workers = 0;
};

struct AssetRef {
  std::string hash;
  std::string name;
  uint64_t size = 0;
};

// The job's effective render settings (messages.fbs RenderSettings).
struct JobSettings {
  int width = 0, height = 0, spp = 0, max_depth = 0;
  uint64_t seed = 0;
  rt::IntegratorKind integrator = rt::IntegratorKind::path;
  std::optional<std::string> camera;  // a scene camera's name or index; none = the scene's default
  // The renderer of a scene that is not ours (backend/scene_kind.h): its version, which every
  // worker's must equal (another version renders other pixels), and the job's options for it.
  std::optional<std::string> renderer;
  std::vector<std::string> renderer_options;
  // Each renderer process's limits (backend/sandbox.h); 0 = the defaults. Not pixels: not in the
  // job's identity (job_settings_lines).
  uint64_t renderer_memory_mib = 0;
  uint32_t renderer_seconds = 0;
  // Which renderer renders it: the master's decision (backend/backend_descriptor.h), which the
  // workers follow. Follows from the scene's name, which is in the job's identity.
  RendererKind renderer_kind = RendererKind::native;
  // Adaptive sampling (since protocol 6; render/adaptive_sampling.h): 0 = off.
  float noise_threshold = 0;
  int min_samples = 0;
  // Passes (since protocol 7; scene/passes.h): what our renderer writes besides the colour.
  rt::PassSet passes = 0;
  // A multi-layer output's channels by name, in the order a result carries them (since protocol
  // 7): the colour's R, G and B first (a result's three colour floats), then every other, each a
  // float after them in each pixel (float32 encoding only). Empty: the colour alone (RGBA, A = 1).
  // Our renderer's passes: the beauty's alpha and the passes (rt::layered_channel_names); a
  // multi-layer .blend's: every channel of every view layer Blender writes.
  std::vector<std::string> channels{};  // {}: settings brace-listed without it raise no warning
  bool operator==(const JobSettings& o) const {
    return width == o.width && height == o.height && spp == o.spp && max_depth == o.max_depth && seed == o.seed &&
           noise_threshold == o.noise_threshold && min_samples == o.min_samples && passes == o.passes &&
           channels == o.channels &&
           integrator == o.integrator && camera == o.camera && renderer == o.renderer &&
           renderer_options == o.renderer_options && renderer_memory_mib == o.renderer_memory_mib &&
           renderer_seconds == o.renderer_seconds && renderer_kind == o.renderer_kind;
  }
};

// A multi-layer output's channels at most (the socket's message limit follows from it).
constexpr size_t k_max_output_channels = 128;
constexpr size_t k_max_channel_name = 256;

// Floats each pixel of a result carries after its colour (R, G, B): those of `s.channels` past the
// colour's three.
inline int carried_floats(const JobSettings& s) {
  return s.channels.size() > 3 ? static_cast<int>(s.channels.size() - 3) : 0;
}

struct Welcome {
  uint32_t protocol_version = k_protocol_version;
  uint64_t job_id = 0;
  std::string scene_name;
  std::vector<AssetRef> assets;
  JobSettings settings;
  uint32_t heartbeat_ms = static_cast<uint32_t>(k_default_heartbeat_interval * 1000);
  uint32_t liveness = k_default_liveness;
  PixelEncoding pixel_encoding = PixelEncoding::float32;
  Compression compression = Compression::none;
};

struct AssetRequest {
  std::vector<std::string> hashes;
};

struct AssetData {
  std::string hash;
  std::vector<uint8_t> data;
};

struct WorkRequest {
  uint32_t credits = 1;
  uint32_t queued = 0;  // a relay's leases waiting unstarted in its queue; 0 from a worker
};

struct Assign {
  uint64_t job_id = 0;
  uint64_t attempt = 0;
  Block rect;
};

struct Result {
  uint64_t job_id = 0;
  uint64_t attempt = 0;
  Block rect;
  PixelEncoding encoding = PixelEncoding::float32;
  Compression compression = Compression::none;
  uint64_t raw_size = 0;
  std::vector<uint8_t> pixels;
  double render_seconds = 0;
  uint64_t rays = 0;
  double queued_seconds = 0;
  double fixed_seconds = 0;  // of render_seconds, what the renderer spends on any block (POV-Ray's start-up)
  // The sender's next WorkRequest carried along (credits 0: none): handled after the result, as if
  // it had come on its own.
  uint32_t next_credits = 0, next_queued = 0;
};

struct Cancel {
  uint64_t job_id = 0;
  uint64_t attempt = 0;
};

struct Heartbeat {
  uint64_t sequence = 0;
  bool ping = true;
};

struct JobDone {
  uint64_t job_id = 0;
};

struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
};

struct BlockFailed {
  uint64_t job_id = 0;
  uint64_t attempt = 0;
  Block rect;
  std::string reason;
};

// Master -> relay: give back the leases among `attempts` that no site worker has started.
struct Recall {
  uint64_t job_id = 0;
  std::vector<uint64_t> attempts;
};

// Relay -> master: the leases it gave back, unstarted (an answer to Recall).
struct Released {
  uint64_t job_id = 0;
  std::vector<uint64_t> attempts;
};

// Client -> service (farm serve): a call that needs no Hello; `body` is its arguments as JSON
// (service/service_calls.h). A client of another protocol version is refused by the service.
struct ServiceCall {
  uint32_t protocol_version = k_protocol_version;
  uint64_t call = 0;  // the client's number for it, echoed in the reply
  std::string command;
  std::string body;
  std::vector<uint8_t> data;  // a file's bytes, for the calls that carry one (upload)
};

// Service -> client: the answer to a call; !ok: `body` is {"error": "..."}.
struct ServiceReply {
  uint64_t call = 0;
  bool ok = false;
  std::string body;
  std::vector<uint8_t> data;  // a file's bytes, for the answers that carry one (fetch)
};

using Message = std::variant<Hello, Welcome, AssetRequest, AssetData, WorkRequest, Assign, Result, Cancel, Heartbeat,
                             JobDone, Error, BlockFailed, Recall, Released, ServiceCall, ServiceReply>;

// Upper bounds a decoder enforces. The defaults admit any legal message of a 16k x 16k image.
struct Limits {
  size_t max_message_bytes = size_t{1} << 30;  // assets can be large meshes
  size_t max_string_bytes = 4096;
  size_t max_body_bytes = size_t{64} << 20;  // a service call's or reply's JSON (a listing of 10,000 jobs)
  size_t max_list_items = 100000;
  int max_image_side = rt::k_max_image_side;
};

std::vector<uint8_t> encode(const Message& message);

struct Decoded {
  std::optional<Message> message;  // set on success
  std::string error;               // set on failure: what was wrong
  // On a failure, the type of a message whose envelope was sound but whose body was refused
  // ("Welcome"), so a worker can answer a job it cannot take; "" otherwise.
  std::string refused_type;
};
Decoded decode(const uint8_t* data, size_t size, const Limits& limits = {});

// Name of the message's type, for logs ("Result", "Hello", ...).
const char* message_name(const Message& message);

}  // namespace farm::proto
