#include "service/job_submission.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <stdexcept>

#include "assets/asset_manifest.h"
#include "assets/content_hash.h"
#include "base/limits.h"
#include "scene/render_settings.h"
#include "scheduler/policy.h"

namespace farm {
namespace {

using nlohmann::json;

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw std::invalid_argument("the submission's '" + field + "' " + why);
}

// The member `key` of `j` as T, within [lo, hi]; absent: nullopt (or an error when required).
template <class T>
std::optional<T> number(const json& j, const char* key, T lo, T hi, bool required = false) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) bad(key, "is missing");
    return std::nullopt;
  }
  if (!it->is_number_integer() && !(std::is_floating_point_v<T> && it->is_number())) bad(key, "is not a number");
  // Compared as long double (exact for every 64-bit integer here): a huge or negative value is
  // refused, not wrapped.
  const long double v = it->is_number_unsigned()  ? static_cast<long double>(it->get<uint64_t>())
                        : it->is_number_integer() ? static_cast<long double>(it->get<int64_t>())
                                                  : static_cast<long double>(it->get<double>());
  if (!(v >= static_cast<long double>(lo) && v <= static_cast<long double>(hi)))
    bad(key, "is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  return static_cast<T>(v);
}

std::optional<std::string> text(const json& j, const char* key, size_t max_bytes = 4096, bool required = false) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (required) bad(key, "is missing");
    return std::nullopt;
  }
  if (!it->is_string()) bad(key, "is not a string");
  std::string s = it->get<std::string>();
  if (s.size() > max_bytes) bad(key, "is longer than " + std::to_string(max_bytes) + " bytes");
  if (s.find('\0') != std::string::npos) bad(key, "holds a NUL character");
  return s;
}

bool flag(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) bad(key, "is not true or false");
  return it->get<bool>();
}

const json& object(const json& j, const char* key) {
  static const json empty = json::object();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return empty;
  if (!it->is_object()) bad(key, "is not an object");
  return *it;
}

}  // namespace

JobSubmission submission_for(const RenderOptions& render, std::vector<ManifestEntry>& files) {
  check_output_path(render.output_path);
  const rt::SceneDesc desc = load_scene_desc(render);
  rt::AssetSearch search;
  search.dirs = render.asset_dirs;
  files = build_manifest(render.scene_path, desc, search);
  JobSubmission s;
  s.scene = files.front().ref.name;
  s.output = std::filesystem::path(render.output_path).filename().string();
  s.render = render;
  s.render.scene_path.clear();
  s.render.output_path.clear();
  s.render.asset_dirs.clear();
  s.name = std::filesystem::path(render.scene_path).filename().string();
  return s;
}

std::string submission_json(const JobSubmission& s) {
  json j;
  j["name"] = s.name;
  j["priority"] = s.priority;
  j["paused"] = s.paused;
  j["scene"] = s.scene;
  json files = json::array();
  for (const proto::AssetRef& f : s.files) files.push_back({{"name", f.name}, {"hash", f.hash}, {"size", f.size}});
  j["files"] = files;
  j["output"] = s.output;
  json r = json::object();
  put(r, "width", s.render.width);
  put(r, "height", s.render.height);
  put(r, "spp", s.render.spp);
  put(r, "frame", s.render.frame);
  put(r, "max_depth", s.render.max_depth);
  put(r, "integrator", s.render.integrator);
  put(r, "camera", s.render.camera);
  put(r, "seed", s.render.seed);
  put(r, "noise_threshold", s.render.noise_threshold);
  put(r, "min_samples", s.render.min_samples);
  put(r, "passes", s.render.passes);
  if (!s.render.renderer_options.empty()) r["renderer_options"] = s.render.renderer_options;
  if (s.render.renderer_memory_mib) r["renderer_memory_mib"] = s.render.renderer_memory_mib;
  if (s.render.renderer_seconds) r["renderer_seconds"] = s.render.renderer_seconds;
  j["render"] = r;
  json sc = json::object();
  sc["policy"] = policy_name(s.scheduling.policy);
  sc["policy_chosen"] = s.policy_chosen;
  if (s.scheduling.block_size > 0) sc["block"] = s.scheduling.block_size;
  sc["min_block"] = s.scheduling.min_block;
  sc["wait"] = s.scheduling.base_wait;
  sc["max_copies"] = s.scheduling.max_copies;
  sc["compress"] = s.compress;
  sc["preview"] = s.preview_costs;
  j["scheduling"] = sc;
  return j.dump();
}

JobSubmission parse_submission(const std::string& text_in) {
  json j;
  try {
    j = json::parse(text_in);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("the submission is not JSON: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("the submission is not a JSON object");
  JobSubmission s;
  try {
    s.name = text(j, "name", 200).value_or("");
    s.priority = *number<int>(j, "priority", k_min_priority, k_max_priority, true);
    s.paused = flag(j, "paused", false);
    s.scene = *text(j, "scene", 4096, true);
    s.output = *text(j, "output", 255, true);
    if (!is_safe_relative_name(s.output) || s.output.find('/') != std::string::npos)
      bad("output", "must be a file name without a folder ('" + s.output + "')");
    auto files = j.find("files");
    if (files == j.end() || !files->is_array() || files->empty()) bad("files", "must list the scene's files");
    if (files->size() > k_max_submission_files) bad("files", "lists more than " + std::to_string(k_max_submission_files) + " files");
    bool scene_listed = false;
    for (const json& f : *files) {
      if (!f.is_object()) bad("files", "holds an entry that is not an object");
      proto::AssetRef ref;
      ref.name = *text(f, "name", 4096, true);
      ref.hash = *text(f, "hash", 64, true);
      ref.size = *number<uint64_t>(f, "size", 0, uint64_t{1} << 40, true);
      if (!is_safe_relative_name(ref.name)) bad("files", "names an unsafe path '" + ref.name + "'");
      if (!is_content_hash(ref.hash)) bad("files", "gives '" + ref.hash + "' as a hash for '" + ref.name + "'");
      scene_listed = scene_listed || ref.name == s.scene;
      s.files.push_back(std::move(ref));
    }
    if (!scene_listed) bad("scene", "'" + s.scene + "' is not among the files");
    if (s.files.front().name != s.scene) bad("files", "must list the scene first");

    const json& r = object(j, "render");
    s.render.width = number<int>(r, "width", 1, rt::k_max_image_side);
    s.render.height = number<int>(r, "height", 1, rt::k_max_image_side);
    s.render.spp = number<int>(r, "spp", 1, rt::k_max_spp);
    s.render.frame = number<int>(r, "frame", 1, rt::k_max_frames);
    s.render.max_depth = number<int>(r, "max_depth", 0, rt::k_max_bounces);
    s.render.integrator = text(r, "integrator", 16);
    if (s.render.integrator && *s.render.integrator != "whitted" && *s.render.integrator != "path")
      bad("integrator", "is neither whitted nor path");
    s.render.camera = text(r, "camera", 256);
    s.render.seed = number<uint64_t>(r, "seed", 0, UINT64_MAX);
    s.render.noise_threshold = number<float>(r, "noise_threshold", 0.0f, 1.0f);
    s.render.min_samples = number<int>(r, "min_samples", 0, rt::k_max_spp);
    s.render.passes = text(r, "passes", 256);
    if (s.render.passes) {
      std::string error;
      if (!rt::parse_pass_list(*s.render.passes, error)) bad("passes", error);
    }
    s.render.renderer_options = text(r, "renderer_options", 4096).value_or("");
    s.render.renderer_memory_mib =
        number<uint64_t>(r, "renderer_memory_mib", 64, k_max_renderer_memory_mib).value_or(0);
    s.render.renderer_seconds = number<uint32_t>(r, "renderer_seconds", 1, k_max_renderer_seconds).value_or(0);

    const json& sc = object(j, "scheduling");
    const std::string policy = text(sc, "policy", 32).value_or(policy_name(k_default_policy));
    std::optional<PolicyKind> kind = parse_policy(policy);
    if (!kind) bad("policy", "'" + policy + "' is not fixed, seed, adaptive or factoring");
    s.scheduling.policy = *kind;
    s.policy_chosen = flag(sc, "policy_chosen", false);
    s.scheduling.block_size = number<int>(sc, "block", 1, k_max_block_side).value_or(0);
    s.scheduling.min_block = number<int>(sc, "min_block", 1, k_max_block_side).value_or(s.scheduling.min_block);
    s.scheduling.base_wait = number<double>(sc, "wait", 0.001, 1e6).value_or(s.scheduling.base_wait);
    s.scheduling.max_copies = number<int>(sc, "max_copies", 1, 64).value_or(s.scheduling.max_copies);
    s.compress = flag(sc, "compress", true);
    s.preview_costs = flag(sc, "preview", true);
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("the submission is malformed: ") + e.what());
  }
  if (s.name.empty()) s.name = s.scene;
  return s;
}

MasterOptions submission_master_options(const JobSubmission& s, const std::string& scene_path,
                                        const std::string& output_dir, const std::string& journal_path,
                                        const MasterOptions& base) {
  MasterOptions o = base;
  o.render = s.render;
  o.render.scene_path = scene_path;
  o.render.output_path = output_dir + "/" + s.output;
  o.render.asset_dirs.clear();  // every file is in the job's folder
  const SchedulerConfig service = base.scheduling;
  o.scheduling = s.scheduling;
  o.scheduling.heartbeat_interval = service.heartbeat_interval;
  o.scheduling.liveness = service.liveness;
  o.policy_chosen = s.policy_chosen;
  o.compress = s.compress;
  o.preview_costs = s.preview_costs;
  o.journal = true;
  o.journal_path = journal_path;
  // Kept when the job ends: the service removes it once the job is recorded done, so a crash
  // between the image's write and that record resumes from it (every block restored, nothing
  // rendered again) instead of rendering the job anew.
  o.keep_journal = true;
  return o;
}

}  // namespace farm
