#include "job/job_identity.h"

#include "assets/content_hash.h"

namespace farm {

std::vector<std::string> render_setting_lines(const rt::RenderSettings& s, const std::optional<std::string>& camera) {
  std::vector<std::string> lines = {"width=" + std::to_string(s.width), "height=" + std::to_string(s.height),
                                    "spp=" + std::to_string(s.spp), "max_depth=" + std::to_string(s.max_depth),
                                    "seed=" + std::to_string(s.seed),
                                    std::string("integrator=") + rt::integrator_name(s.integrator)};
  if (camera) lines.push_back("camera=" + *camera);
  return lines;
}

JobIdentity make_job_identity(const std::vector<ManifestEntry>& manifest, const rt::RenderSettings& settings,
                              const std::optional<std::string>& camera, const std::vector<int>& frames,
                              proto::PixelEncoding encoding) {
  JobIdentity j;
  j.text = "scene=" + manifest.front().ref.hash + "\n";
  for (size_t i = 1; i < manifest.size(); ++i) j.text += "asset " + manifest[i].ref.name + "=" + manifest[i].ref.hash + "\n";
  for (const std::string& line : render_setting_lines(settings, camera)) j.text += line + "\n";
  j.text += "frames=";
  for (size_t i = 0; i < frames.size(); ++i) j.text += std::to_string(frames[i]) + (i + 1 == frames.size() ? "\n" : ",");
  j.text += std::string("pixels=") + (encoding == proto::PixelEncoding::srgb8 ? "srgb8" : "float32") + "\n";
  const std::string h = content_hash(reinterpret_cast<const uint8_t*>(j.text.data()), j.text.size());
  j.id = std::stoull(h.substr(0, 15), nullptr, 16);
  return j;
}

}  // namespace farm
