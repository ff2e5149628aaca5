// The farm under hostile input and faults, over tcp://127.0.0.1 with ephemeral ports:
//  - a flood of malformed messages from raw DEALERs while a real worker renders (the offender
//    is quarantined, the image stays byte-identical, nothing corrupt reaches it);
//  - workers killed, stopped past the liveness limit, restarted, and linked through the
//    fault-injecting proxy (tools/net/delay_proxy.py): every block is committed exactly once.
// Sizes are CI-sized; FARM_FLOOD_MESSAGES and FARM_CHAOS_SEED change them (tools/chaos.py runs
// the longer version).
#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <zmq.hpp>

#include "../test_paths.h"
#include "farm_fixture.h"
#include "process.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"

namespace fs = std::filesystem;
using test_process::Child;
using Clock = std::chrono::steady_clock;

namespace {

using farm_fixture::Fixture;
using farm_fixture::k_farm;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A number from the environment (longer runs: FARM_FLOOD_MESSAGES, FARM_CHAOS_SEED), else `fallback`.
long env_or(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n > 0 ? n : fallback;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::string find(const std::string& text, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(pattern)) ? std::string(m[1]) : std::string();
}

// A master on `bind` (an ephemeral port by default). A restarted master (resume) must bind the
// port of the first one so that workers and proxies find it again: pass tcp://127.0.0.1:PORT.
std::unique_ptr<Child> start_master(const Fixture& f, const std::string& out, const std::string& log,
                                    std::vector<std::string> extra, const std::string& bind = "tcp://127.0.0.1:*") {
  std::vector<std::string> args = {k_farm, "master", f.scene, "-o", out, "--bind", bind};
  args.insert(args.end(), extra.begin(), extra.end());
  auto master = std::make_unique<Child>(args, log);
  REQUIRE(master->wait_for_log("listening on", 20));
  return master;
}

std::string endpoint_from(const Child& master) {
  return find(master.log(), "listening on (tcp://127\\.0\\.0\\.1:[0-9]+)");
}

using farm_fixture::start_worker;  // one thread, --once, the fixture's cache, gives up after 20 s

// ---- the flood ----------------------------------------------------------------------------

struct Lease {
  uint64_t attempt;
  farm::Block rect;
};

void send_message(zmq::socket_t& s, const farm::proto::Message& m) {
  auto bytes = farm::proto::encode(m);
  REQUIRE(s.send(zmq::buffer(bytes), zmq::send_flags::none));
}

// The messages arriving on `s` within `seconds`, decoded (undecodable ones skipped), until
// `enough` of type T have come.
template <typename T>
std::vector<farm::proto::Message> receive_for(zmq::socket_t& s, double seconds, size_t enough) {
  std::vector<farm::proto::Message> got;
  size_t count = 0;
  auto t0 = Clock::now();
  while (seconds_since(t0) < seconds && count < enough) {
    zmq::message_t msg;
    if (!s.recv(msg, zmq::recv_flags::dontwait)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    auto d = farm::proto::decode(static_cast<const uint8_t*>(msg.data()), msg.size());
    if (!d.message) continue;
    if (std::holds_alternative<T>(*d.message)) ++count;
    got.push_back(std::move(*d.message));
  }
  return got;
}

farm::proto::Result pixels_result(uint64_t job, uint64_t attempt, const farm::Block& rect, float value) {
  farm::proto::Result r;
  r.job_id = job;
  r.attempt = attempt;
  r.rect = rect;
  r.encoding = farm::proto::PixelEncoding::float32;
  std::vector<float> rgba(static_cast<size_t>(rect.pixels()) * 4, value);
  r.pixels = farm::proto::encode_pixels(rgba.data(), rgba.size() / 4, r.encoding);
  r.raw_size = r.pixels.size();
  return r;
}

// Malformed (or, for a few kinds, valid but unwelcome) messages, all kinds in turn. `leases`
// are the sender's own leases: results for them carry a wrong rectangle or non-finite pixels,
// never finite pixels (those the master cannot tell from real ones). Each call sends one
// message (of one or more frames).
class Malformer {
 public:
  Malformer(uint64_t job, uint32_t seed) : m_job(job), m_rng(seed) {}
  static constexpr int k_kinds = 20;
  bool stalled() const { return m_stalled; }

  void send(zmq::socket_t& s, int kind, const std::vector<Lease>& leases) {
    using namespace farm::proto;
    auto bytes = [](const Message& m) { return encode(m); };
    // A send that times out (the master has gone) stops the flood instead of blocking it.
    auto put = [&](const std::vector<uint8_t>& b, bool more) {
      if (!s.send(zmq::buffer(b), more ? zmq::send_flags::sndmore : zmq::send_flags::none)) m_stalled = true;
    };
    auto one = [&](const std::vector<uint8_t>& b) { put(b, false); };
    farm::Block rect{1, static_cast<int>(m_rng() % 50), static_cast<int>(m_rng() % 40), 8, 8};  // frame, x, y, w, h
    const Lease* own = leases.empty() ? nullptr : &leases[m_rng() % leases.size()];
    switch (kind % k_kinds) {
      case 0: one(random_bytes(m_rng() % 300)); break;
      case 1: one({}); break;  // an empty frame
      case 2: {                // two frames: a valid request plus junk
        put(bytes(WorkRequest{1}), true);
        one(random_bytes(10));
        break;
      }
      case 3: {  // three frames
        auto j = random_bytes(20);
        put(j, true);
        put(j, true);
        one(j);
        break;
      }
      case 4: {  // a truncated result
        auto b = bytes(bogus_result(rect));
        b.resize(m_rng() % b.size());
        one(b);
        break;
      }
      case 5: {  // bit flips in a result for an attempt nobody holds
        auto b = bytes(bogus_result(rect));
        for (int i = 0, n = 1 + m_rng() % 3; i < n; ++i) b[m_rng() % b.size()] ^= static_cast<uint8_t>(1u << (m_rng() % 8));
        one(b);
        break;
      }
      case 6: one(bytes(bogus_result(rect))); break;  // bogus attempt id
      case 7: {                                         // another job's result for our own lease
        auto r = own ? pixels_result(m_job ^ 0x5a5a, own->attempt, own->rect, 0.5f) : bogus_result(rect);
        one(bytes(r));
        break;
      }
      case 8: {  // own lease, wrong rectangle
        farm::Block wrong = own ? own->rect : rect;
        wrong.x += 1;
        one(bytes(pixels_result(m_job, own ? own->attempt : 1, wrong, 0.5f)));
        break;
      }
      case 9:  // own lease, right rectangle, NaN pixels: must never reach the image
      case 10: {
        if (!own) return one(random_bytes(5));
        float bad = kind % k_kinds == 9 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
        one(bytes(pixels_result(m_job, own->attempt, own->rect, bad)));
        break;
      }
      case 11: {  // own lease, wrong pixel encoding
        if (!own) return one(random_bytes(7));
        auto r = pixels_result(m_job, own->attempt, own->rect, 0.5f);
        r.encoding = PixelEncoding::srgb8;
        one(bytes(r));
        break;
      }
      case 12: {  // own lease, "compressed" garbage
        if (!own) return one(random_bytes(9));
        auto r = pixels_result(m_job, own->attempt, own->rect, 0.5f);
        r.compression = Compression::zstd;
        r.pixels = random_bytes(40);
        one(bytes(r));
        break;
      }
      case 13: {  // own lease, payload of the wrong length
        if (!own) return one(random_bytes(11));
        auto r = pixels_result(m_job, own->attempt, own->rect, 0.5f);
        r.pixels.resize(r.pixels.size() - 12);
        one(bytes(r));
        break;
      }
      case 14: one(bytes(Hello{k_protocol_version, "x", "dup", 1, {}})); break;  // a duplicate hello
      case 15: one(bytes(Assign{m_job, m_rng(), rect})); break;                    // master-only messages
      case 16: one(bytes(JobDone{m_job})); break;
      case 17: one(bytes(AssetRequest{{"0123456789abcdef", "no such asset"}})); break;
      case 18: one(bytes(Heartbeat{m_rng(), false})); break;  // a pong nobody asked for
      case 19: {                                             // a rectangle outside any image
        farm::Block huge{1, 1 << 20, 0, 8, 8};
        one(bytes(bogus_result(huge)));
        break;
      }
    }
  }

 private:
  std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> b(n);
    for (auto& x : b) x = static_cast<uint8_t>(m_rng());
    return b;
  }
  // Attempt ids far above any real one (bit flips cannot bring them down to one).
  farm::proto::Result bogus_result(const farm::Block& rect) {
    return pixels_result(m_job, 0xdead000000000000ull | (m_rng() & 0xffffff), rect, 0.25f);
  }
  uint64_t m_job;
  std::mt19937 m_rng;
  bool m_stalled = false;
};

struct Quarantine {
  int worker = -1;
  long bad = 0, dropped = 0;
};

std::vector<Quarantine> quarantined_peers(const std::string& json) {
  std::vector<Quarantine> out;
  std::string list = find(json, "\"quarantined_peers\": \\[([^\\]]*)\\]");
  std::regex one("\"worker\": ([0-9]+), \"bad_messages\": ([0-9]+), \"dropped_frames\": ([0-9]+)");
  for (std::sregex_iterator it(list.begin(), list.end(), one), end; it != end; ++it) {
    out.push_back({std::stoi((*it)[1]), std::stol((*it)[2]), std::stol((*it)[3])});
  }
  return out;
}

// ---- the faults ---------------------------------------------------------------------------

// Accepted leases from a --stats JSON must tile every frame exactly once. Returns "" or what is wrong.
std::string check_tiled_once(const std::string& json, int width, int height) {
  std::regex block(
      "\\{\"frame\": ([0-9]+), \"x\": ([0-9]+), \"y\": ([0-9]+), \"width\": ([0-9]+), \"height\": ([0-9]+),[^}]*"
      "\"outcome\": \"([a-z]+)\"\\}");
  std::vector<int> cover(static_cast<size_t>(width) * height, 0);
  int accepted = 0, other = 0;
  for (std::sregex_iterator it(json.begin(), json.end(), block), end; it != end; ++it) {
    if ((*it)[6] != "accepted") {
      ++other;
      continue;
    }
    ++accepted;
    int x = std::stoi((*it)[2]), y = std::stoi((*it)[3]), w = std::stoi((*it)[4]), h = std::stoi((*it)[5]);
    if ((*it)[1] != "1" || x < 0 || y < 0 || x + w > width || y + h > height) return "accepted block outside the image";
    for (int yy = y; yy < y + h; ++yy)
      for (int xx = x; xx < x + w; ++xx) ++cover[static_cast<size_t>(yy) * width + xx];
  }
  for (size_t i = 0; i < cover.size(); ++i) {
    if (cover[i] != 1) {
      return "pixel (" + std::to_string(i % width) + ", " + std::to_string(i / width) + ") committed " +
             std::to_string(cover[i]) + " times";
    }
  }
  if (accepted == 0) return "no accepted blocks";
  if (std::to_string(accepted) != find(json, "\"blocks_completed\": ([0-9]+)")) return "accepted leases != blocks_completed";
  MESSAGE(accepted << " accepted leases tile the image once; " << other << " other leases (lost, cancelled, late)");
  return "";
}

// tools/net/delay_proxy.py in front of `target` (tcp://host:port); its endpoint in `endpoint`.
std::unique_ptr<Child> start_proxy(const std::string& target, const std::vector<std::string>& faults, const std::string& log,
                                   std::string& endpoint) {
  std::vector<std::string> args = {"/usr/bin/python3", test_paths::project("tools/net/delay_proxy.py"), "--listen",
                                   "127.0.0.1:0", "--target", target.substr(std::string("tcp://").size())};
  args.insert(args.end(), faults.begin(), faults.end());
  auto proxy = std::make_unique<Child>(args, log);
  REQUIRE(proxy->wait_for_log("listening on", 20));
  endpoint = "tcp://" + find(proxy->log(), "listening on ([0-9.]+:[0-9]+)");
  return proxy;
}

bool no_children_left() {
  errno = 0;
  return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace

TEST_CASE("chaos: the pixel codec refuses non-finite floats") {
  std::vector<float> rgba(16, 0.5f);
  std::vector<uint8_t> out;
  auto wire = farm::proto::encode_pixels(rgba.data(), 4, farm::proto::PixelEncoding::float32);
  CHECK(farm::proto::decode_pixels(wire, 4, farm::proto::PixelEncoding::float32, out).ok());
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    rgba[9] = bad;  // pixel 2, green
    wire = farm::proto::encode_pixels(rgba.data(), 4, farm::proto::PixelEncoding::float32);
    CHECK(farm::proto::decode_pixels(wire, 4, farm::proto::PixelEncoding::float32, out).message() == "pixel 2 is not finite");
  }
}

TEST_CASE("chaos: a flood of malformed messages is quarantined and corrupts no pixel") {
  const long flood = env_or("FARM_FLOOD_MESSAGES", 100000);
  // EXR: float32 pixels on the wire, so NaN and infinity can be sent.
  Fixture f("chaos_flood", 1500, ".exr");
  const std::string out = f.path("farm.exr"), stats = f.path("stats.json");
  const auto t0 = Clock::now();
  // A long liveness so that the offender is removed by quarantine, not for silence.
  auto master = start_master(f, out, out + ".master.log",
                             {"--block", "8", "--heartbeat", "0.5", "--liveness", "4", "--stats", stats});
  const std::string ep = endpoint_from(*master);
  auto honest = start_worker(f, ep, "honest");
  REQUIRE(honest->wait_for_log("scene loaded", 20));

  zmq::context_t ctx;
  auto dealer = [&] {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 2000);  // closing waits for what is queued
    s.set(zmq::sockopt::sndhwm, 100000);
    s.set(zmq::sockopt::sndtimeo, 5000);
    s.connect(ep);
    return s;
  };
  // The offender joins like a worker, learns the job and takes leases.
  zmq::socket_t offender = dealer();
  send_message(offender, farm::proto::Hello{farm::proto::k_protocol_version, "x", "offender", 4, {}});
  uint64_t job = 0;
  for (const auto& m : receive_for<farm::proto::Welcome>(offender, 5, 1))
    if (auto* w = std::get_if<farm::proto::Welcome>(&m)) job = w->job_id;
  REQUIRE(job != 0);
  auto take_leases = [&] {
    std::vector<Lease> leases;
    send_message(offender, farm::proto::WorkRequest{4});
    for (const auto& m : receive_for<farm::proto::Assign>(offender, 3, 4))
      if (auto* a = std::get_if<farm::proto::Assign>(&m)) leases.push_back({a->attempt, a->rect});
    return leases;
  };
  std::vector<Lease> leases = take_leases();
  REQUIRE(!leases.empty());
  Malformer malformer(job, 11);
  // NaN and infinity for each of its leases (each is then given back to the pool), then fresh leases.
  for (size_t i = 0; i < leases.size(); ++i) malformer.send(offender, 9 + static_cast<int>(i % 2), {leases[i]});
  // Held untouched until the quarantine, which must give them back to the pool.
  std::vector<Lease> held = take_leases();
  REQUIRE(!held.empty());

  // Probes: every kind of malformed message through the full decoding path, each probe below the
  // quarantine limit; half of them joined first (so their results reach the lease checks).
  auto flood_start = Clock::now();
  for (int p = 0; p < 10; ++p) {
    zmq::socket_t probe = dealer();
    if (p % 2 == 0) send_message(probe, farm::proto::Hello{farm::proto::k_protocol_version, "x", "probe", 1, {}});
    for (int i = 0; i < 90; ++i) malformer.send(probe, i, {});
  }
  // A frame beyond ZMQ_MAXMSGSIZE (8 MB here): libzmq drops that connection.
  {
    zmq::socket_t big = dealer();
    std::vector<uint8_t> huge(9 << 20, 0x42);
    big.set(zmq::sockopt::linger, 0);
    (void)big.send(zmq::buffer(huge), zmq::send_flags::none);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // The flood, from the offender: every kind, mixed, including results for its own leases.
  for (long i = 0; i < flood && !malformer.stalled(); ++i) malformer.send(offender, static_cast<int>(i), leases);
  const double flood_seconds = seconds_since(flood_start);
  offender.set(zmq::sockopt::linger, 0);
  REQUIRE_FALSE(malformer.stalled());

  REQUIRE(master->wait(60) == 0);
  const double total = seconds_since(t0);
  CHECK(honest->wait(20) == 0);
  MESSAGE("probes, an oversized frame and a flood of " << flood << " messages sent in " << flood_seconds
                                                         << " s; whole run " << total << " s");
  CHECK(total < 60);
  CHECK(test_process::same_file(out, f.reference));  // zero corrupted pixels

  const std::string json = slurp(stats), log = master->log();
  INFO(log.substr(0, 4000));
  long bad = std::stol(find(json, "\"bad_messages\": ([0-9]+)"));
  MESSAGE("bad messages counted: " << bad);
  CHECK(bad > 100 + 300);  // the offender's 101 plus the probes' (only undecodable ones count for unjoined probes)
  auto q = quarantined_peers(json);
  REQUIRE(q.size() == 1);  // only the offender: probes stay below the limit
  CHECK(q[0].worker > 0);  // it had joined: removed from the scheduler, not just muted
  CHECK(q[0].bad >= 101);  // just past the limit (an asset request for two unknown hashes counts twice)
  CHECK(q[0].bad <= 102);
  CHECK(q[0].dropped > flood - 1000);  // nearly the whole flood dropped unread
  CHECK(std::stol(find(json, "\"dropped_frames\": ([0-9]+)")) == q[0].dropped);
  CHECK(log.find("quarantined") != std::string::npos);
  // Removed by quarantine, not by the liveness check; its leases were lost and re-rendered.
  CHECK(log.find("worker " + std::to_string(q[0].worker) + " is silent") == std::string::npos);
  CHECK(std::regex_search(json, std::regex("\"worker\": " + std::to_string(q[0].worker) + ", [^}]*\"outcome\": \"lost\"")));
  CHECK(check_tiled_once(json, 61, 45) == "");
  // The log stays bounded however large the flood.
  CHECK(std::count(log.begin(), log.end(), '\n') < 200);
}

TEST_CASE("chaos: workers killed, stopped, restarted and behind a faulty proxy; every block committed once") {
  const uint32_t seed = static_cast<uint32_t>(env_or("FARM_CHAOS_SEED", 2026));
  Fixture f("chaos_faults", 6000, ".png");
  const std::string out = f.path("farm.png"), stats = f.path("stats.json"), fault_log = f.path("faults.log");
  std::ofstream faults(fault_log);
  const auto t0 = Clock::now();
  auto note = [&](const std::string& what) {
    faults << std::fixed << std::setprecision(2) << seconds_since(t0) << " s " << what << "\n" << std::flush;
  };
  // Liveness 0.2 s x 3 = 0.6 s: a stop of 1 s or more is a death.
  const std::vector<std::string> master_args = {"--block", "8",     "--heartbeat", "0.2",    "--liveness", "3",
                                                "--stats", stats, "--keep-journal", "--resume"};
  auto master = start_master(f, out, f.path("master.log"), master_args);
  const std::string ep = endpoint_from(*master);
  // Two workers direct, two through the proxy: one only slow, one with spikes, resets and stalls.
  std::string calm_ep, faulty_ep;
  auto calm = start_proxy(ep, {"--delay-ms", "2", "--jitter-ms", "1"}, f.path("proxy_calm.log"), calm_ep);
  auto faulty = start_proxy(ep,
                            {"--delay-ms", "1", "--spike-prob", "0.02", "--spike-ms", "300", "--reset-rate", "0.4",
                             "--stall-rate", "0.3", "--stall-s", "1.0", "--seed", std::to_string(seed)},
                            f.path("proxy_faulty.log"), faulty_ep);
  struct Slot {
    std::string endpoint, name;
    std::unique_ptr<Child> child;
    int generation = 0;
    double cont_at = -1;  // SIGSTOPped until then
  };
  std::vector<Slot> slots(4);
  const std::pair<std::string, std::string> where[] = {{ep, "direct-a"}, {ep, "direct-b"}, {calm_ep, "calm"}, {faulty_ep, "faulty"}};
  for (size_t i = 0; i < slots.size(); ++i) std::tie(slots[i].endpoint, slots[i].name) = where[i];
  auto launch = [&](Slot& s) {
    s.child = start_worker(f, s.endpoint, s.name + "-" + std::to_string(s.generation++));
  };
  for (Slot& s : slots) launch(s);

  std::mt19937 rng(seed);
  std::map<std::string, int> injected;
  double next_fault = 1.0;
  // Faults during the first k_chaos_seconds; afterwards the farm must finish on its own. The
  // master's "done in" line says it has finished (Child::wait would kill a running child).
  constexpr double k_chaos_seconds = 15, k_limit_seconds = 60;
  auto finished = [&] {
    std::string log = master->log();
    return log.find("info: done in ") != std::string::npos || log.find("no image written") != std::string::npos ||
           log.find("master failed") != std::string::npos;
  };
  while (!finished() && seconds_since(t0) < k_limit_seconds) {
    const double t = seconds_since(t0);
    for (Slot& s : slots) {
      if (s.cont_at >= 0 && t >= s.cont_at) {
        s.child->kill(SIGCONT);
        s.cont_at = -1;
        note("SIGCONT " + s.name);
      }
    }
    if (t >= 5 && injected["master"] == 0) {
      // The master itself, once: kill -9, then the same command with --resume on the same port,
      // so that workers and proxies find it again. Its journal carries the blocks across.
      master->kill(SIGKILL);
      note("SIGKILL master, restarted with --resume");
      master = start_master(f, out, f.path("master2.log"), master_args, ep);
      ++injected["master"];
    }
    if (t >= next_fault && t < k_chaos_seconds) {
      Slot& s = slots[rng() % slots.size()];
      const unsigned kind = rng() % 3;
      if (s.cont_at < 0) {
        if (kind == 0) {
          s.child->kill(SIGKILL);
          note("SIGKILL " + s.name + ", restarted");
          launch(s);
          ++injected["kill"];
        } else if (kind == 1) {
          s.child->kill(SIGSTOP);
          s.cont_at = t + 1.0 + (rng() % 600) / 1000.0;  // past the 0.6 s liveness limit
          note("SIGSTOP " + s.name);
          ++injected["stop"];
        } else {
          s.child->kill(SIGTERM);
          s.child->wait(5);
          note("SIGTERM " + s.name + ", restarted");
          launch(s);
          ++injected["restart"];
        }
      }
      next_fault = t + 0.4 + (rng() % 500) / 1000.0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A stopped worker would never exit: continue them all before the end.
  for (Slot& s : slots) {
    if (s.cont_at >= 0) {
      s.child->kill(SIGCONT);
      note("SIGCONT " + s.name + " (end)");
    }
  }
  const int master_code = master->wait(10);
  const double total = seconds_since(t0);
  note("master exited with " + std::to_string(master_code));
  faults.close();
  const std::string proxy_log = faulty->log();
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = proxy_log.find(what); p != std::string::npos; p = proxy_log.find(what, p + 1)) ++n;
    return n;
  };
  MESSAGE("seed " << seed << ": " << injected["kill"] << " SIGKILL, " << injected["stop"] << " SIGSTOP, "
                  << injected["restart"] << " restarts, " << injected["master"] << " master kill + resume; proxy: " << count("fault reset") << " resets, " << count("fault stall")
                  << " stalls, " << count("fault spike") << " spikes; run " << total << " s");
  MESSAGE(slurp(fault_log));
  INFO(master->log().substr(0, 6000));
  REQUIRE(master_code == 0);
  CHECK(total < k_limit_seconds);
  CHECK(injected["kill"] + injected["stop"] + injected["restart"] >= 5);  // the run really was disturbed
  CHECK(test_process::same_file(out, f.reference));
  // Exactly once across both masters: the journal holds every block either of them committed.
  CHECK(injected["master"] == 1);
  const std::string journal_check = f.path("journal.log");
  CHECK(test_process::run({k_farm, "journal", out + ".journal", "--complete"}, journal_check) == 0);
  CHECK(slurp(journal_check).find("master starts: 2") != std::string::npos);
  CHECK(slurp(journal_check).find("exactly once: yes, every pixel committed") != std::string::npos);
  // The second master took over the first one's blocks rather than rendering them again.
  CHECK(find(slurp(stats), "\"resumed_blocks\": ([1-9][0-9]*)") != "");

  // Clean-up: workers that took part exit on JobDone; one restarted too late to join never hears
  // of the job and is stopped. Then no child of this test may be left.
  int exited = 0, stopped = 0;
  for (Slot& s : slots) {
    if (s.child->wait_for_log("is done", 3)) {
      CHECK(s.child->wait(5) == 0);
      ++exited;
    } else {
      s.child->kill(SIGKILL);
      ++stopped;
    }
  }
  MESSAGE(exited << " workers exited on JobDone, " << stopped << " (not joined at the end) were stopped");
  CHECK(exited >= 1);
  for (auto* p : {&calm, &faulty}) {
    (*p)->kill(SIGTERM);
    CHECK((*p)->wait(5) >= 0);
  }
  CHECK(no_children_left());
}
