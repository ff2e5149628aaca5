#include "sim/cluster_spec.h"
#include "base/limits.h"
#include "base/file_checks.h"

#include <algorithm>
#include <fstream>
#include <random>

#include "scene/toml_reader.h"

namespace farm {

namespace {

using rt::TableReader;

// A number, or [lo, hi] with lo <= hi, each within [min, max].
SimRange read_range(const TableReader& r, const std::string& key, SimRange fallback, double min, double max) {
  const toml::value* v = r.find(key);
  if (!v) return fallback;
  const rt::NumRange allowed = rt::NumRange::closed(min, max);
  if (v->is_array()) {
    const auto& a = v->as_array();
    if (a.size() != 2)
      r.fail_at(key, rt::quote_name(key) + " must be a number or a range [low, high], got " + rt::describe_value(*v));
    double lo = r.to_float(a[0], key + "[0]", allowed);
    double hi = r.to_float(a[1], key + "[1]", allowed);
    if (lo > hi) r.fail_at(key, rt::quote_name(key) + " range is reversed: low " + std::to_string(lo) + " > high " + std::to_string(hi));
    return {lo, hi};
  }
  double x = r.to_float(*v, key, allowed);
  return {x, x};
}

// Times may be -1 ("never") or >= 0.
SimRange read_time(const TableReader& r, const std::string& key, SimRange fallback) {
  SimRange t = read_range(r, key, fallback, -1, 1e9);
  if ((t.lo < 0 && t.lo != -1) || (t.hi < 0 && t.hi != -1) || (t.lo == -1 && t.hi != -1))
    r.fail_at(key, rt::quote_name(key) + " must be -1 (never) or a time in seconds >= 0");
  return t;
}

const std::vector<std::string> k_link_keys = {"latency_ms", "jitter_ms", "bandwidth_mbit"};

void read_link(const TableReader& r, WorkerGroupSpec& g) {
  g.latency_ms = read_range(r, "latency_ms", g.latency_ms, 0, 60'000);
  g.jitter_ms = read_range(r, "jitter_ms", g.jitter_ms, 0, 60'000);
  g.bandwidth_mbit = read_range(r, "bandwidth_mbit", g.bandwidth_mbit, 0, 1e6);
}

WorkerGroupSpec read_group(const TableReader& r, const WorkerGroupSpec& defaults, size_t index) {
  std::vector<std::string> allowed = {"name", "count", "speed", "threads", "prefetch", "join",
                                      "startup", "leave", "fail", "block_overhead_ms", "cpu_quota",
                                      "quota_period_ms", "site", "render_failures"};
  allowed.insert(allowed.end(), k_link_keys.begin(), k_link_keys.end());
  r.check_keys(allowed);
  WorkerGroupSpec g = defaults;
  g.name = r.get_string("name").value_or("group" + std::to_string(index + 1));
  g.count = static_cast<int>(r.get_int("count", 1, 1, 1'000'000));
  g.speed = read_range(r, "speed", g.speed, 1e-6, 1e6);
  if (g.speed.lo <= 0) r.fail_at("speed", "'speed' must be > 0");
  g.threads = static_cast<int>(r.get_int("threads", 1, 1, k_max_threads));
  g.prefetch = static_cast<int>(r.get_int("prefetch", 1, 0, 1024));
  g.join = read_range(r, "join", g.join, 0, 1e9);
  g.startup = read_range(r, "startup", g.startup, 0, 1e6);
  g.leave = read_time(r, "leave", g.leave);
  g.fail = read_time(r, "fail", g.fail);
  g.block_overhead_ms = read_range(r, "block_overhead_ms", g.block_overhead_ms, 0, 1e6);
  g.cpu_quota = read_range(r, "cpu_quota", g.cpu_quota, 0, 4096);
  g.quota_period_ms = r.get_float("quota_period_ms", 100.0f, rt::NumRange::closed(1, 1e6));
  if (g.cpu_quota.is_range() && g.cpu_quota.lo <= 0) r.fail_at("cpu_quota", "a 'cpu_quota' range must start above 0");
  // The kernel refuses a quota below 1 ms per period.
  if (g.cpu_quota.lo > 0 && g.cpu_quota.lo * g.quota_period_ms < 1)
    r.fail_at("cpu_quota", "'cpu_quota' x 'quota_period_ms' must be at least 1 ms of CPU per period (as the kernel's)");
  read_link(r, g);
  g.site = r.get_string("site").value_or("");
  g.render_failures = r.get_float("render_failures", 0.0f, rt::NumRange::closed(0, 1));
  if (g.render_failures > 0 && !g.site.empty())
    r.fail_at("render_failures", "'render_failures' is not modelled for workers behind a site yet");
  return g;
}

SiteSpec read_site(const TableReader& r, size_t index) {
  r.check_keys({"name", "latency_ms", "bandwidth_mbit", "spare"});
  SiteSpec s;
  s.name = r.get_string("name").value_or("site" + std::to_string(index + 1));
  if (s.name.empty()) r.fail_at("name", "a site's 'name' must not be empty");
  s.latency_ms = read_range(r, "latency_ms", s.latency_ms, 0, 60'000);
  s.bandwidth_mbit = read_range(r, "bandwidth_mbit", s.bandwidth_mbit, 0, 1e6);
  s.spare = static_cast<int>(r.get_int("spare", 4, 0, 1 << 20));
  return s;
}

// The [[site]]s, before the groups that name them; names are unique.
void read_sites(const rt::TomlDocument& doc, const TableReader& root, ClusterSpec& spec) {
  const toml::value* sites = root.find("site");
  if (!sites) return;
  if (!sites->is_array()) root.fail_at("site", "'site' must be an array of tables (write [[site]] sections)");
  for (const toml::value& t : sites->as_array()) {
    if (!t.is_table()) doc.fail(doc.loc(t), "'site' must hold tables (write [[site]] sections)");
    const TableReader r(doc, t, "[[site]]");
    SiteSpec s = read_site(r, spec.sites.size());
    for (const SiteSpec& earlier : spec.sites)
      if (earlier.name == s.name) r.fail_at("name", "duplicate site " + rt::quote_name(s.name) + " (site names must be unique)");
    spec.sites.push_back(std::move(s));
  }
}

double draw(const SimRange& r, std::mt19937_64& rng) {
  if (!r.is_range()) return r.lo;
  return std::uniform_real_distribution<double>(r.lo, r.hi)(rng);
}

}  // namespace

int ClusterSpec::total_workers() const {
  int n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

ClusterSpec parse_cluster_spec(const std::string& text, const std::string& file) {
  rt::TomlDocument doc(text, file);
  TableReader root(doc, doc.root(), "the cluster file");
  root.check_keys({"network", "per_block_overhead_ms", "site", "group"});
  ClusterSpec spec;
  spec.file = file;
  spec.per_block_overhead = root.get_float("per_block_overhead_ms", 0.15f, rt::NumRange::closed(0, 1e6)) / 1000.0;
  WorkerGroupSpec defaults;
  if (const toml::value* n = root.find("network")) {
    if (!n->is_table()) root.fail_at("network", "'network' must be a table ([network])");
    TableReader nr(doc, *n, "[network]");
    nr.check_keys(k_link_keys);
    read_link(nr, defaults);
  }
  read_sites(doc, root, spec);
  const toml::value* groups = root.find("group");
  if (!groups) root.fail("no workers: add at least one [[group]] with a count");
  if (!groups->is_array()) root.fail_at("group", "'group' must be an array of tables (write [[group]] sections)");
  size_t i = 0;
  long total = 0;
  for (const toml::value& g : groups->as_array()) {
    if (!g.is_table()) doc.fail(doc.loc(g), "'group' must hold tables (write [[group]] sections)");
    const TableReader r(doc, g, "[[group]]");
    spec.groups.push_back(read_group(r, defaults, i++));
    const std::string& site = spec.groups.back().site;
    if (r.has("site") && std::none_of(spec.sites.begin(), spec.sites.end(), [&](const SiteSpec& s) { return s.name == site; }))
      r.fail_at("site", "unknown site " + rt::quote_name(site) + " (declare it in a [[site]] with that name)");
    total += spec.groups.back().count;
    if (total > 1'000'000) doc.fail(doc.loc(g), "more than 1,000,000 workers in total");
  }
  if (spec.groups.empty()) root.fail("no workers: add at least one [[group]] with a count");
  return spec;
}

std::string read_sim_input(const std::string& path, const std::string& what) {
  // stat() first: a FIFO or device would block the read forever.
  if (Status regular = check_regular_file(path, what); !regular.ok()) throw rt::SceneError(regular.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw rt::SceneError("cannot open " + what + " '" + path + "'");
  std::string text;
  char chunk[1 << 16];
  while (text.size() <= rt::k_max_scene_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  return text;
}

ClusterSpec read_cluster_spec(const std::string& path) { return parse_cluster_spec(read_sim_input(path, "cluster file"), path); }

std::vector<SimWorkerSpec> expand_cluster(const ClusterSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<SimWorkerSpec> out;
  out.reserve(static_cast<size_t>(spec.total_workers()));
  for (const WorkerGroupSpec& g : spec.groups) {
    for (int i = 0; i < g.count; ++i) {
      SimWorkerSpec w;
      w.name = g.name + "-" + std::to_string(i + 1);
      w.speed = draw(g.speed, rng);
      w.threads = g.threads;
      w.prefetch = g.prefetch;
      w.join = draw(g.join, rng);
      w.startup = draw(g.startup, rng);
      w.leave = draw(g.leave, rng);
      w.fail = draw(g.fail, rng);
      w.render_failures = g.render_failures;
      w.latency = draw(g.latency_ms, rng) / 1000.0;
      w.jitter = draw(g.jitter_ms, rng) / 1000.0;
      w.bandwidth = draw(g.bandwidth_mbit, rng) * 1e6 / 8.0;
      if (g.block_overhead_ms.lo >= 0) w.block_overhead = draw(g.block_overhead_ms, rng) / 1000.0;
      w.cpu_quota = draw(g.cpu_quota, rng);  // after the others: no new draw for a cluster without one
      w.quota_period = g.quota_period_ms / 1000.0;
      for (size_t s = 0; s < spec.sites.size() && !g.site.empty(); ++s)
        if (spec.sites[s].name == g.site) w.site = static_cast<int>(s);
      out.push_back(w);
    }
  }
  return out;
}

std::vector<SimSiteSpec> expand_sites(const ClusterSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x5173'5173'5173'5173ULL);
  std::vector<SimSiteSpec> out;
  for (const SiteSpec& s : spec.sites) {
    SimSiteSpec d;
    d.name = s.name;
    d.latency = draw(s.latency_ms, rng) / 1000.0;
    d.bandwidth = draw(s.bandwidth_mbit, rng) * 1e6 / 8.0;
    d.spare = s.spare;
    out.push_back(d);
  }
  return out;
}

}  // namespace farm
