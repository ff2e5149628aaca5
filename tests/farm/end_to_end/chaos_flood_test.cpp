// The farm under hostile input, over tcp://127.0.0.1 with ephemeral ports: a flood of malformed
// messages from raw DEALERs while a real worker renders (the offender is quarantined, the image
// stays byte-identical, nothing corrupt reaches it), and the codec that keeps non-finite floats out.
// CI-sized; FARM_FLOOD_MESSAGES makes the flood longer (tools/chaos.py runs the longer version).
// The faults (killed workers, faulty links) are in chaos_faults_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <regex>
#include <zmq.hpp>

#include "farm/chaos_support.h"
#include "farm/farm_fixture.h"
#include "farm/process.h"
#include "protocol/pixel_codec.h"
#include "protocol/protocol.h"

TEST_SUITE_BEGIN("integration");

namespace {

using namespace chaos_support;

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

}  // namespace

TEST_CASE("protocol client: a result carrying the next request is answered with the next block, no WorkRequest needed") {
  Fixture f("next_request", 16, ".exr");
  auto master = start_master(f, f.path("farm.exr"), {"--policy", "fixed", "--block", "16"});
  const std::string ep = endpoint_from(*master);
  zmq::context_t ctx;
  zmq::socket_t client(ctx, zmq::socket_type::dealer);
  client.set(zmq::sockopt::linger, 0);
  client.connect(ep);
  send_message(client, farm::proto::Hello{farm::proto::k_protocol_version, "x", "client", 1, {}});
  uint64_t job = 0;
  for (const auto& m : receive_for<farm::proto::Welcome>(client, 10, 1))
    if (auto* w = std::get_if<farm::proto::Welcome>(&m)) job = w->job_id;
  REQUIRE(job != 0);
  auto assigns = [&](double seconds) {
    std::vector<Lease> out;
    for (const auto& m : receive_for<farm::proto::Assign>(client, seconds, 1))
      if (auto* a = std::get_if<farm::proto::Assign>(&m)) out.push_back({a->attempt, a->rect});
    return out;
  };
  send_message(client, farm::proto::WorkRequest{1});
  const std::vector<Lease> first = assigns(10);
  REQUIRE(first.size() == 1);
  // The result asks for one more: the master answers it as it would a WorkRequest.
  farm::proto::Result r = pixels_result(job, first[0].attempt, first[0].rect, 0.5f);
  r.next_credits = 1;
  send_message(client, r);
  const std::vector<Lease> second = assigns(10);
  REQUIRE(second.size() == 1);
  CHECK(second[0].attempt != first[0].attempt);
  // A result that asks for nothing gets nothing: demand-driven, as before.
  send_message(client, pixels_result(job, second[0].attempt, second[0].rect, 0.5f));
  CHECK(assigns(1.5).empty());
}

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

TEST_SUITE_END();
