#include "job/job_identity.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

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

namespace {

// A whole decimal number and nothing else ("12x", "", "+3" and overflow are not).
bool whole_number(const std::string& text, int64_t& value) {
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && at == end && !text.empty();
}

}  // namespace

Status identity_image(const std::string& identity, IdentityImage& image) {
  const Status incomplete = Status::error("the job's identity does not give the image size, frames and pixel encoding");
  image = IdentityImage{};
  int64_t width = 0, height = 0;
  std::vector<int64_t> frames;
  bool have_width = false, have_height = false, have_frames = false, have_pixels = false;
  std::istringstream in(identity);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("width=", 0) == 0) {
      if (!(have_width = whole_number(line.substr(6), width))) return incomplete;
    } else if (line.rfind("height=", 0) == 0) {
      if (!(have_height = whole_number(line.substr(7), height))) return incomplete;
    } else if (line.rfind("frames=", 0) == 0) {
      have_frames = true;
      std::istringstream list(line.substr(7));
      for (std::string f; std::getline(list, f, ',');) {
        if (!whole_number(f, frames.emplace_back())) return incomplete;
      }
    } else if (line.rfind("channels=", 0) == 0) {
      image.channels = 1 + static_cast<int>(std::count(line.begin(), line.end(), '|'));
      if (image.channels < 3 || static_cast<size_t>(image.channels) > proto::k_max_output_channels)
        return Status::error("the job's identity names " + std::to_string(image.channels) + " channels (3 to " +
                             std::to_string(proto::k_max_output_channels) + ")");
    } else if (line == "pixels=srgb8" || line == "pixels=float32") {
      have_pixels = true;
      image.encoding = line == "pixels=srgb8" ? proto::PixelEncoding::srgb8 : proto::PixelEncoding::float32;
    }
  }
  if (!have_width || !have_height || !have_frames || !have_pixels) return incomplete;
  // The limits of a job's own settings (rt::render_settings_problem), in the same words.
  std::string problem = rt::int_limit_problem("width", width, 1, rt::k_max_image_side);
  if (problem.empty()) problem = rt::int_limit_problem("height", height, 1, rt::k_max_image_side);
  if (problem.empty()) problem = rt::int_limit_problem("frames", static_cast<int64_t>(frames.size()), 1, rt::k_max_frames);
  if (problem.empty()) {
    rt::RenderSettings settings;
    settings.width = static_cast<int>(width);
    settings.height = static_cast<int>(height);
    settings.frames = static_cast<int>(frames.size());
    problem = rt::render_settings_problem(settings);
  }
  // A job renders some of its frames 1..frames, each once.
  std::set<int64_t> seen;
  for (size_t i = 0; problem.empty() && i < frames.size(); ++i) {
    problem = rt::int_limit_problem("frame", frames[i], 1, rt::k_max_frames);
    if (problem.empty() && !seen.insert(frames[i]).second) problem = "frame " + std::to_string(frames[i]) + " is named twice";
  }
  if (!problem.empty()) return Status::error("the job's identity: " + problem);
  image.width = static_cast<int>(width);
  image.height = static_cast<int>(height);
  image.frames.assign(frames.begin(), frames.end());
  return {};
}

}  // namespace farm
