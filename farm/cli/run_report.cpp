#include "cli/run_report.h"

#include "base/json_text.h"

#include <sys/resource.h>

#include <cstdio>
#include <sstream>

namespace farm {

namespace {

double mrays_per_second(const RunReport& r) {
  return r.render_seconds > 0 ? static_cast<double>(r.rays.total()) / r.render_seconds / 1e6 : 0.0;
}

}  // namespace

uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

void print_report(std::ostream& out, const RunReport& r) {
  auto line = [&](const std::string& label, const std::string& value) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "  %-26s %s\n", label.c_str(), value.c_str());
    out << buf;
  };
  out << "Render statistics\n";
  line("Image", std::to_string(r.width) + " x " + std::to_string(r.height) + ", " + std::to_string(r.frames) +
                    " frame(s), " + std::to_string(r.spp) + " spp, " + r.integrator);
  line("Pixels", std::to_string(r.pixels));
  // Another renderer (POV-Ray, Blender) says nothing of its geometry, rays or BVH: no zeros.
  const bool counted = r.rays.total() > 0;
  if (counted) {
    line("Geometry", std::to_string(r.scene_stats.triangles) + " triangles, " + std::to_string(r.scene_stats.spheres) +
                         " spheres, " + std::to_string(r.scene_stats.instances) + " instances, " +
                         std::to_string(r.scene_stats.emitters) + " emitters");
    line("Camera rays", std::to_string(r.rays.camera));
    line("Shadow rays", std::to_string(r.rays.shadow));
    line("Reflected rays", std::to_string(r.rays.reflected));
    line("Refracted rays", std::to_string(r.rays.refracted));
    line("Indirect rays", std::to_string(r.rays.indirect));
    line("Total rays", std::to_string(r.rays.total()));
  }
  line("Parse time", fixed(r.parse_seconds, 3) + " s");
  if (counted) {
    line("Load time", fixed(r.load_seconds, 3) + " s");
    line("BVH build time", fixed(r.bvh_seconds, 3) + " s");
  }
  line("Render time", fixed(r.render_seconds, 3) + " s (" + std::to_string(r.threads) + " threads)");
  line("Total time", fixed(r.total_seconds, 3) + " s");
  if (counted) line("Speed", fixed(mrays_per_second(r), 2) + " Mrays/s");
  line("Peak memory", fixed(static_cast<double>(r.peak_rss_bytes) / (1024.0 * 1024.0), 1) + " MiB");
}

std::string report_json(const RunReport& r) {
  std::ostringstream o;
  o << "{\n"
    << "  \"command\": " << json_string(r.command) << ",\n"
    << "  \"scene\": " << json_string(r.scene) << ",\n"
    << "  \"output\": " << json_string(r.output) << ",\n"
    << "  \"width\": " << r.width << ",\n  \"height\": " << r.height << ",\n"
    << "  \"spp\": " << r.spp << ",\n  \"frames\": " << r.frames << ",\n"
    << "  \"integrator\": " << json_string(r.integrator) << ",\n"
    << "  \"threads\": " << r.threads << ",\n"
    << "  \"pixels\": " << r.pixels << ",\n"
    << "  \"triangles\": " << r.scene_stats.triangles << ",\n"
    << "  \"spheres\": " << r.scene_stats.spheres << ",\n"
    << "  \"instances\": " << r.scene_stats.instances << ",\n"
    << "  \"emitters\": " << r.scene_stats.emitters << ",\n"
    << "  \"rays\": {\"camera\": " << r.rays.camera << ", \"shadow\": " << r.rays.shadow
    << ", \"reflected\": " << r.rays.reflected << ", \"refracted\": " << r.rays.refracted
    << ", \"indirect\": " << r.rays.indirect << ", \"total\": " << r.rays.total() << "},\n"
    << "  \"seconds\": {\"parse\": " << fixed(r.parse_seconds, 6) << ", \"load\": " << fixed(r.load_seconds, 6)
    << ", \"bvh\": " << fixed(r.bvh_seconds, 6) << ", \"render\": " << fixed(r.render_seconds, 6)
    << ", \"total\": " << fixed(r.total_seconds, 6) << "},\n"
    << "  \"mrays_per_second\": " << fixed(mrays_per_second(r), 4) << ",\n"
    << "  \"peak_rss_bytes\": " << r.peak_rss_bytes << "\n"
    << "}\n";
  return o.str();
}

}  // namespace farm
