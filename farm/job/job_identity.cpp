#include "job/job_identity.h"

#include "assets/content_hash.h"
#include "job/job_settings.h"

namespace farm {

JobIdentity make_job_identity(const std::vector<ManifestEntry>& manifest, const proto::JobSettings& settings,
                              const std::vector<int>& frames, proto::PixelEncoding encoding, bool whole_frames) {
  JobIdentity j;
  j.text = "scene=" + manifest.front().ref.hash + "\n";
  for (size_t i = 1; i < manifest.size(); ++i) j.text += "asset " + manifest[i].ref.name + "=" + manifest[i].ref.hash + "\n";
  for (const std::string& line : job_settings_lines(settings)) j.text += line + "\n";
  j.text += "frames=";
  for (size_t i = 0; i < frames.size(); ++i) j.text += std::to_string(frames[i]) + (i + 1 == frames.size() ? "\n" : ",");
  j.text += std::string("pixels=") + (encoding == proto::PixelEncoding::srgb8 ? "srgb8" : "float32") + "\n";
  if (whole_frames) j.text += "blocks=whole frames\n";  // absent otherwise: other jobs keep their identity
  const std::string h = content_hash(reinterpret_cast<const uint8_t*>(j.text.data()), j.text.size());
  j.id = std::stoull(h.substr(0, 15), nullptr, 16);
  return j;
}

}  // namespace farm
