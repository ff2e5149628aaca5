#include "live/live_format.h"

#include <cmath>
#include <cstdio>

#include "base/json_text.h"

namespace farm {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

std::string object(const std::vector<std::string>& fields) { return "{" + join(fields) + "}"; }

std::string number(double v, int decimals) { return std::isfinite(v) ? fixed(v, decimals) : "null"; }

std::string worker_json(const LiveWorker& w) {
  return object({json_field("id", w.id), json_field("name", w.name), json_field("host", w.host),
                 json_field("threads", w.threads), json_field("site_workers", w.site_workers),
                 json_field("state", w.state), json_field("reason", w.reason),
                 json_field("blocks", w.blocks),
                 json_field("pixels", w.pixels), json_raw_field("mrays_per_second", number(w.mrays_per_second, 3)),
                 json_field("block_size", w.block_size), json_raw_field("wait_seconds", number(w.wait_seconds, 3)),
                 json_raw_field("rtt_ms", number(w.rtt_ms, 3)),
                 json_raw_field("bandwidth_mbit", number(w.bandwidth_mbit, 3))});
}

// Metric values: Prometheus reads Go floats ("NaN", "+Inf" included).
std::string value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct Exposition {
  std::string text;
  void family(const std::string& name, const char* type, const std::string& help) {
    text += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, double v, const std::string& labels = "") {
    text += name + (labels.empty() ? "" : "{" + labels + "}") + " " + value(v) + "\n";
  }
};

std::string worker_labels(const LiveWorker& w) {
  return "worker=\"" + prometheus_label_value(w.name) + "\",id=\"" + std::to_string(w.id) + "\"";
}

}  // namespace

std::string prometheus_label_value(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string live_status_json(const LiveStatus& s) {
  std::vector<std::string> workers, tiles, decisions, final_lines;
  for (const LiveWorker& w : s.workers) workers.push_back(worker_json(w));
  for (const LiveTile& t : s.tiles)
    tiles.push_back("[" + join({std::to_string(t.x), std::to_string(t.y), std::to_string(t.width),
                                std::to_string(t.height), std::to_string(t.worker)}) + "]");
  for (const LiveDecision& d : s.decisions)
    decisions.push_back(object({json_raw_field("at", number(d.at, 3)), json_field("text", d.text)}));
  for (const std::string& line : s.final_lines) final_lines.push_back(json_string(line));
  const double fraction = s.pixels_total ? static_cast<double>(s.pixels_done) / static_cast<double>(s.pixels_total) : 0;
  return object({json_field("scene", s.scene), json_field("width", s.width), json_field("height", s.height),
                 json_field("frames", s.frames), json_field("frame_shown", s.frame_shown), json_field("policy", s.policy),
                 json_raw_field("elapsed_seconds", number(s.elapsed_seconds, 3)),
                 json_raw_field("eta_seconds", s.eta_seconds < 0 ? "null" : number(s.eta_seconds, 3)),
                 json_field("pixels_done", s.pixels_done), json_field("pixels_total", s.pixels_total),
                 json_raw_field("progress", number(fraction, 6)), json_field("blocks_done", s.blocks_done),
                 json_field("blocks_outstanding", s.blocks_outstanding), json_field("reassignments", s.reassignments),
                 json_field("halvings", s.halvings), json_field("bytes_in", s.bytes_in), json_field("bytes_out", s.bytes_out),
                 json_field("finished", s.finished), json_field("outcome", s.outcome),
                 json_raw_field("workers", "[" + join(workers) + "]"),
                 json_raw_field("tiles", "[" + join(tiles) + "]"),
                 json_raw_field("decisions", "[" + join(decisions) + "]"),
                 json_raw_field("final", "[" + join(final_lines) + "]")}) +
         "\n";
}

std::string live_prometheus_text(const LiveStatus& s) {
  Exposition e;
  e.family("farm_pixels_done", "gauge", "Pixels of the job whose results are in the image.");
  e.sample("farm_pixels_done", static_cast<double>(s.pixels_done));
  e.family("farm_pixels_total", "gauge", "Pixels of the whole job (every frame).");
  e.sample("farm_pixels_total", static_cast<double>(s.pixels_total));
  e.family("farm_blocks_done_total", "counter", "Blocks accepted into the image.");
  e.sample("farm_blocks_done_total", static_cast<double>(s.blocks_done));
  e.family("farm_blocks_outstanding", "gauge", "Blocks handed out without a result yet.");
  e.sample("farm_blocks_outstanding", static_cast<double>(s.blocks_outstanding));
  e.family("farm_reassignments_total", "counter", "Copies of outstanding blocks handed to other workers.");
  e.sample("farm_reassignments_total", static_cast<double>(s.reassignments));
  e.family("farm_halvings_total", "counter", "Block size halvings by the policy.");
  e.sample("farm_halvings_total", static_cast<double>(s.halvings));
  e.family("farm_bytes_received_total", "counter", "Bytes of results received from workers.");
  e.sample("farm_bytes_received_total", static_cast<double>(s.bytes_in));
  e.family("farm_bytes_sent_total", "counter", "Bytes sent to workers.");
  e.sample("farm_bytes_sent_total", static_cast<double>(s.bytes_out));
  e.family("farm_elapsed_seconds", "gauge", "Seconds since the job started.");
  e.sample("farm_elapsed_seconds", s.elapsed_seconds);
  e.family("farm_finished", "gauge", "1 once the job has ended.");
  e.sample("farm_finished", s.finished ? 1 : 0);
  size_t present = 0;
  for (const LiveWorker& w : s.workers) present += w.state != "left" && w.state != "dead";
  e.family("farm_workers", "gauge", "Workers in the job now.");
  e.sample("farm_workers", static_cast<double>(present));
  struct PerWorker {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const LiveWorker&);
  };
  const PerWorker per_worker[] = {
      {"farm_worker_up", "gauge", "1 while the worker is in the job.",
       [](const LiveWorker& w) { return w.state == "left" || w.state == "dead" ? 0.0 : 1.0; }},
      {"farm_worker_threads", "gauge", "Render threads of the worker.", [](const LiveWorker& w) { return double(w.threads); }},
      {"farm_worker_site_workers", "gauge", "Workers behind it: a relay's site (0 for a worker).",
       [](const LiveWorker& w) { return double(w.site_workers); }},
      {"farm_worker_blocks_total", "counter", "Blocks of the worker accepted into the image.",
       [](const LiveWorker& w) { return double(w.blocks); }},
      {"farm_worker_pixels_total", "counter", "Pixels of the worker accepted into the image.",
       [](const LiveWorker& w) { return double(w.pixels); }},
      {"farm_worker_mrays_per_second", "gauge", "Million rays per second of render time.",
       [](const LiveWorker& w) { return w.mrays_per_second; }},
      {"farm_worker_block_size", "gauge", "Side in pixels of the worker's next block.",
       [](const LiveWorker& w) { return double(w.block_size); }},
      {"farm_worker_wait_seconds", "gauge", "The policy's waiting time for the worker.",
       [](const LiveWorker& w) { return w.wait_seconds; }},
      {"farm_worker_rtt_seconds", "gauge", "Measured round trip to the worker.",
       [](const LiveWorker& w) { return w.rtt_ms / 1000.0; }},
      {"farm_worker_bandwidth_bytes_per_second", "gauge", "Measured bandwidth to the worker.",
       [](const LiveWorker& w) { return w.bandwidth_mbit * 1e6 / 8.0; }},
  };
  for (const PerWorker& p : per_worker) {
    if (s.workers.empty()) continue;
    e.family(p.name, p.type, p.help);
    for (const LiveWorker& w : s.workers) e.sample(p.name, p.get(w), worker_labels(w));
  }
  return e.text;
}

}  // namespace farm
