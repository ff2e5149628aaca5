#include "master/job_outputs.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "base/file_checks.h"
#include "base/file_write.h"
#include "base/json_text.h"
#include "base/memory.h"
#include "costs/cost_map_from_blocks.h"
#include "job/job_spec.h"
#include "master/tile_map.h"

namespace farm {

namespace {

void write_cost_map(const MasterOptions& o, const rt::RenderSettings& s, const std::vector<int>& frames,
                    const JobController& job) {
  std::vector<MeasuredBlock> blocks;
  for (const auto& [attempt, lease] : job.stats().leases()) {
    if (lease.outcome == LeaseOutcome::accepted) blocks.push_back({lease.block, lease.render_seconds});
  }
  CostMap map = cost_map_from_blocks(s.width, s.height, frames, blocks);
  map.note = "farm master " + o.render.scene_path + " " + std::to_string(s.width) + "x" + std::to_string(s.height) +
             " spp " + std::to_string(s.spp) + "; worker-reported seconds of each block spread over its pixels";
  map.write(o.cost_map_path);
  spdlog::info("wrote cost map {} ({} x {} tiles of {} px, total {:.3f} s)", o.cost_map_path, map.columns(), map.rows(),
               map.tile(), map.total());
}

}  // namespace

bool check_frame_outputs(const MasterOptions& o, const std::vector<int>& frames) {
  // An animation writes one file per frame (name_0003.png): each must be writable before any
  // rendering, or frame 3 fails after frames 1 and 2 are written, with a journal left behind.
  // Every frame's file is in the output's folder: that takes a new file if the first one's does.
  for (size_t i = 0; i < frames.size(); ++i) {
    if (o.stop && o.stop->load()) return false;
    const std::string path = output_path_for_frame(o.render.output_path, frames[i], frames.size() > 1);
    const Status s = i == 0 ? probe_writable(path, "output image") : check_writable_name(path, "output image");
    if (!s.ok()) throw std::invalid_argument(s.message());
  }
  return true;
}

void check_job_output_paths(const MasterOptions& o) {
  check_output_path(o.render.output_path);
  if (!o.tile_map_path.empty()) check_output_path(o.tile_map_path);
  if (!o.stats_path.empty()) check_output_path(o.stats_path + ".png");  // only the folder matters
  const std::filesystem::path cost_dir = std::filesystem::path(o.cost_map_path).parent_path();
  if (!cost_dir.empty() && !std::filesystem::is_directory(cost_dir)) {
    throw std::invalid_argument("cost map folder '" + cost_dir.string() + "' does not exist");
  }
  // Every file the job will write, probed before rendering or binding (nothing is left behind).
  // One probe for every command (base/file_checks.h); a refusal is bad input, before any work.
  auto require = [](const Status& s) {
    if (!s.ok()) throw std::invalid_argument(s.message());
  };
  require(probe_writable(o.render.output_path, "output image"));
  if (!o.tile_map_path.empty()) require(probe_writable(o.tile_map_path, "tile map"));
  if (!o.stats_path.empty()) require(probe_writable(o.stats_path, "statistics file"));
  if (!o.cost_map_path.empty()) require(probe_writable(o.cost_map_path, "cost map"));
  if (!o.trace_path.empty()) require(probe_writable(o.trace_path, "trace"));
  if (o.journal) require(probe_writable(job_journal_path(o), "journal"));
}

std::string job_journal_path(const MasterOptions& o) {
  return o.journal_path.empty() ? default_journal_path(o.render.output_path) : o.journal_path;
}

bool write_job_outputs(const MasterOptions& o, const rt::RenderSettings& s, const std::vector<int>& frames,
                       const FrameStore& store, const JobController& job, double makespan,
                       const std::vector<std::string>& extra_stats) {
  bool all = true;
  auto attempt = [&all](auto&& write) {
    try {
      write();
    } catch (const std::exception& e) {
      spdlog::error("{}", error_text(e));
      all = false;
    }
  };
  if (!o.tile_map_path.empty()) {
    attempt([&] {
      write_tile_map(o.tile_map_path, s.width, s.height, store.rgba(frames.front()), frames.front(), job.stats());
      spdlog::info("wrote tile map {}", o.tile_map_path);
    });
  }
  if (!o.stats_path.empty()) {
    attempt([&] {
      std::vector<std::string> fields = {json_field("scene", o.render.scene_path), json_field("width", s.width),
                                         json_field("height", s.height), json_field("frames", frames.size()),
                                         json_field("spp", s.spp)};
      fields.insert(fields.end(), extra_stats.begin(), extra_stats.end());
      const std::string text = job.stats().json(job.scheduler(), makespan, fields);
      if (Status st = write_file_replacing(o.stats_path, text, "statistics file"); !st.ok()) {
        throw std::runtime_error(st.message());
      }
    });
  }
  if (!o.cost_map_path.empty()) attempt([&] { write_cost_map(o, s, frames, job); });
  return all;
}

}  // namespace farm
