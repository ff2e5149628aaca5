// Statistics of one render, printed POV-Ray-style on the terminal and optionally as JSON.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "render/render.h"

namespace farm {

struct RunReport {
  std::string command;      // "single", ...
  std::string scene;
  std::string output;
  int width = 0, height = 0, spp = 0, frames = 0, threads = 0;
  std::string integrator;
  double parse_seconds = 0, load_seconds = 0, bvh_seconds = 0, render_seconds = 0, total_seconds = 0;
  uint64_t pixels = 0;
  rt::RayCounts rays;
  rt::LoadStats scene_stats;
  uint64_t peak_rss_bytes = 0;
};

// Peak resident set size of this process so far.
uint64_t peak_rss_bytes();

void print_report(std::ostream& out, const RunReport& r);
std::string report_json(const RunReport& r);

}  // namespace farm
