// The live view's text forms: /api/status JSON and /metrics in the Prometheus text format,
// including names that need escaping.
#include <doctest/doctest.h>

#include <regex>
#include <sstream>

#include "live/live_format.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

LiveStatus sample_status() {
  LiveStatus s;
  s.scene = "scenes/chess2.toml";
  s.width = 64;
  s.height = 48;
  s.policy = "seed";
  s.elapsed_seconds = 1.5;
  s.eta_seconds = 0.5;
  s.pixels_done = 1024;
  s.pixels_total = 3072;
  s.blocks_done = 4;
  s.blocks_outstanding = 2;
  s.reassignments = 1;
  s.halvings = 3;
  LiveWorker a;
  a.id = 1;
  a.name = "root@host\"1\\\nx";  // a quote, a backslash and a line feed
  a.host = "host";
  a.state = "rendering";
  a.blocks = 4;
  a.pixels = 1024;
  a.mrays_per_second = 2.25;
  a.block_size = 16;
  a.wait_seconds = 0.75;
  a.rtt_ms = 1.5;
  a.bandwidth_mbit = 100;
  LiveWorker b;
  b.id = 2;
  b.name = "plain";
  b.state = "dead";
  b.threads = 6;
  b.site_workers = 3;  // a relay
  s.workers = {a, b};
  s.tiles = {{1, 0, 0, 16, 16, 1}};
  s.decisions = {{1.25, "worker 1: block 32 -> 16 (waited 0.8 s > 0.75 s)"}};
  return s;
}

// Every line of a Prometheus text exposition: a comment (# HELP/# TYPE) or
// name{label="value",...} value, with label values escaped.
bool is_prometheus_text(const std::string& text) {
  static const std::regex comment(R"(# (HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*|TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge)))");
  static const std::regex sample(
      R"([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? (-?[0-9.e+-]+|NaN|[+-]Inf))");
  std::istringstream in(text);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines)
    if (!std::regex_match(line, comment) && !std::regex_match(line, sample)) {
      MESSAGE("not Prometheus text: " << line);
      return false;
    }
  return lines > 0 && text.back() == '\n';
}

}  // namespace

TEST_CASE("live: the status JSON has every documented field, escaped") {
  const std::string j = live_status_json(sample_status());
  for (const char* field : {"\"scene\": \"scenes/chess2.toml\"", "\"width\": 64", "\"progress\": 0.333333", "\"eta_seconds\": 0.500",
                            "\"blocks_done\": 4", "\"blocks_outstanding\": 2", "\"reassignments\": 1", "\"halvings\": 3",
                            "\"finished\": false", "\"block_size\": 16", "\"rtt_ms\": 1.500", "\"state\": \"dead\"",
                            "\"tiles\": [[0, 0, 16, 16, 1]]", "\"threads\": 6, \"site_workers\": 3"})
    CHECK_MESSAGE(j.find(field) != std::string::npos, field);
  CHECK(j.find(R"("name": "root@host\"1\\\u000ax")") != std::string::npos);
  LiveStatus unknown = sample_status();
  unknown.eta_seconds = -1;
  CHECK(live_status_json(unknown).find("\"eta_seconds\": null") != std::string::npos);
}

TEST_CASE("live: /metrics is Prometheus text with escaped worker labels") {
  const std::string m = live_prometheus_text(sample_status());
  CHECK(is_prometheus_text(m));
  CHECK(m.find("farm_blocks_done_total 4\n") != std::string::npos);
  CHECK(m.find("farm_blocks_outstanding 2\n") != std::string::npos);
  CHECK(m.find("farm_workers 1\n") != std::string::npos);  // the dead one is not counted
  CHECK(m.find(R"(farm_worker_block_size{worker="root@host\"1\\\nx",id="1"} 16)") != std::string::npos);
  CHECK(m.find(R"(farm_worker_up{worker="plain",id="2"} 0)") != std::string::npos);
  CHECK(m.find(R"(farm_worker_site_workers{worker="plain",id="2"} 3)") != std::string::npos);
  // The checker itself rejects what is not the format.
  CHECK_FALSE(is_prometheus_text("farm_x{worker=\"a\nb\"} 1\n"));
  CHECK_FALSE(is_prometheus_text("farm x 1\n"));
  CHECK(prometheus_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
}

TEST_SUITE_END();
