// What makes a job the same job: the scene's content, its assets, the effective render
// settings, the frames and the pixel encoding. Results of another job are refused by it, and a
// journal is resumed only by the job that wrote it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "assets/asset_manifest.h"
#include "base/status.h"
#include "protocol/protocol.h"
#include "scene/scene_desc.h"

namespace farm {

struct JobIdentity {
  std::string text;  // "key=value" lines; a journal keeps it to name what differs
  uint64_t id = 0;   // from its hash; every job message carries it
};

// `whole_frames`: the scene's frames are rendered whole, one block each (backend/whole_frame.h),
// a line of its own, so that a journal of the same scene rendered in smaller blocks (by a farm
// that did not know to render it whole) is not resumed into an image of mixed blocks.
JobIdentity make_job_identity(const std::vector<ManifestEntry>& manifest, const proto::JobSettings& settings,
                              const std::vector<int>& frames, proto::PixelEncoding encoding, bool whole_frames = false);

// The image an identity's job renders, read back from its "width=", "height=", "frames=" and
// "pixels=" lines.
struct IdentityImage {
  int width = 0, height = 0;
  std::vector<int> frames;
  proto::PixelEncoding encoding = proto::PixelEncoding::float32;
  int channels = 0;  // its "channels=" line's count: a multi-layer output's channels; 0 without one
  // Floats each pixel carries after its colour (float32 only: pixel_codec.h).
  int carried_floats() const { return encoding == proto::PixelEncoding::float32 && channels > 3 ? channels - 3 : 0; }
};

// The one reader of a journal's identity, for `farm journal` and --resume alike: ok with `image`
// filled if the lines are there and within the limits every job keeps (the size, pixels and
// frames of renderer/scene/render_settings.h, in a scene file's words), else why not.
Status identity_image(const std::string& identity, IdentityImage& image);

}  // namespace farm
