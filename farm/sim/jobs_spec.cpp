#include "sim/jobs_spec.h"

#include "control/job_dispatch.h"

#include <filesystem>

#include "scheduler/block.h"
#include "scheduler/policy.h"
#include "sim/cluster_spec.h"
#include "scene/toml_reader.h"

namespace farm {

namespace {

using rt::TableReader;

// A time in seconds: -1 (never) or >= 0.
double read_time(const TableReader& r, const std::string& key) {
  const double t = r.get_float(key, -1.0f, rt::NumRange::closed(-1, 1e9));
  if (t < 0 && t != -1) r.fail_at(key, rt::quote_name(key) + " must be -1 (never) or a time in seconds >= 0");
  return t;
}

JobEntrySpec read_job(const TableReader& r, size_t index, const std::string& folder) {
  r.check_keys({"name", "cost_map", "priority", "submit", "work_factor", "frames", "policy", "block", "load_ms",
                "setup_ms", "pause", "resume", "reprioritise_at", "new_priority"});
  JobEntrySpec j;
  j.name = r.get_string("name").value_or("job" + std::to_string(index + 1));
  if (j.name.empty()) r.fail_at("name", "a job's 'name' must not be empty");
  if (std::optional<std::string> map = r.get_string("cost_map")) {
    if (map->empty()) r.fail_at("cost_map", "'cost_map' must name a file (leave it out for the command's cost map)");
    const std::filesystem::path p(*map);
    j.cost_map = p.is_absolute() || folder.empty() ? *map : (std::filesystem::path(folder) / p).string();
    if (Status regular = check_regular_file(j.cost_map, "cost map"); !regular.ok())
      r.fail_at("cost_map", "'cost_map' of job " + rt::quote_name(j.name) + ": " + regular.message());
  }
  j.priority = static_cast<int>(r.get_int("priority", 0, k_min_priority, k_max_priority));
  j.submit = r.get_float("submit", 0.0f, rt::NumRange::closed(0, 1e9));
  j.work_factor = r.get_float("work_factor", 1.0f, rt::NumRange::closed(1e-6, 1e6));
  j.frames = static_cast<int>(r.get_int("frames", 0, 1, 100000));
  if (std::optional<std::string> policy = r.get_string("policy")) {
    j.policy = parse_policy(*policy);
    if (!j.policy) r.fail_at("policy", "unknown 'policy' " + rt::quote_name(*policy) + " (fixed, seed, adaptive or factoring)");
  }
  j.block = static_cast<int>(r.get_int("block", 0, 1, k_max_block_side));
  if (r.has("load_ms")) j.load = r.get_float("load_ms", 0.0f, rt::NumRange::closed(0, 1e9)) / 1000.0;
  j.setup = r.get_float("setup_ms", 0.0f, rt::NumRange::closed(0, 1e9)) / 1000.0;
  j.pause = read_time(r, "pause");
  j.resume = read_time(r, "resume");
  if (j.resume >= 0 && (j.pause < 0 || j.resume < j.pause))
    r.fail_at("resume", "'resume' needs a 'pause' at or before it");
  if (j.pause >= 0 && j.pause < j.submit) r.fail_at("pause", "'pause' is before the job's 'submit'");
  j.reprioritise_at = read_time(r, "reprioritise_at");
  j.new_priority = static_cast<int>(r.get_int("new_priority", 0, k_min_priority, k_max_priority));
  if (r.has("new_priority") != (j.reprioritise_at >= 0))
    r.fail_at(r.has("new_priority") ? "new_priority" : "reprioritise_at",
              "'reprioritise_at' and 'new_priority' go together");
  return j;
}

}  // namespace

JobsSpec parse_jobs_spec(const std::string& text, const std::string& file) {
  rt::TomlDocument doc(text, file);
  TableReader root(doc, doc.root(), "the jobs file");
  root.check_keys({"job"});
  JobsSpec spec;
  spec.file = file;
  const std::string folder = std::filesystem::path(file).parent_path().string();
  const toml::value* jobs = root.find("job");
  if (!jobs) root.fail("no jobs: add at least one [[job]]");
  if (!jobs->is_array()) root.fail_at("job", "'job' must be an array of tables (write [[job]] sections)");
  for (const toml::value& t : jobs->as_array()) {
    if (!t.is_table()) doc.fail(doc.loc(t), "'job' must hold tables (write [[job]] sections)");
    const TableReader r(doc, t, "[[job]]");
    JobEntrySpec j = read_job(r, spec.jobs.size(), folder);
    for (const JobEntrySpec& earlier : spec.jobs)
      if (earlier.name == j.name) r.fail_at("name", "duplicate job " + rt::quote_name(j.name) + " (job names must be unique)");
    spec.jobs.push_back(std::move(j));
    if (spec.jobs.size() > 10'000) doc.fail(doc.loc(t), "more than 10,000 jobs");
  }
  if (spec.jobs.empty()) root.fail("no jobs: add at least one [[job]]");
  return spec;
}

JobsSpec read_jobs_spec(const std::string& path) { return parse_jobs_spec(read_sim_input(path, "jobs file"), path); }

}  // namespace farm
