// The farm end to end over tcp://127.0.0.1 with ephemeral ports: its image must be
// byte-identical to `farm single` whatever the block size, worker count, failures,
// late joiners or garbage on the wire.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <regex>
#include <zmq.hpp>

#include <OpenImageIO/imageio.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "test_paths.h"
#include "farm/farm_fixture.h"
#include "farm/process.h"
#include "scheduler/scheduler_trace.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using test_process::Child;

using namespace farm_fixture;

namespace {

// The channels an image file holds, as OpenImageIO (and so `oiiotool --info`) lists them.
std::vector<std::string> exr_channel_names(const std::string& path) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) return {};
  return in->spec().channelnames;
}

}  // namespace

TEST_CASE("farm: local render is byte-identical to single for block sizes 4..64 and 1..3 workers" * doctest::test_suite("slow")) {
  Fixture f("farm_identical");
  for (int block : {4, 16, 32, 64}) {
    for (int workers : {1, 2, 3}) {
      CAPTURE(block);
      CAPTURE(workers);
      std::string out = f.path("farm_" + std::to_string(block) + "_" + std::to_string(workers) + ".png");
      int code = test_process::run({k_farm, "render", f.scene, "-o", out, "--block", std::to_string(block), "--workers",
                                    std::to_string(workers), "--threads", "1"},
                                   out + ".log", 120);
      REQUIRE(code == 0);
      CHECK(test_process::same_file(out, f.reference));
    }
  }
}

TEST_CASE("farm: with adaptive sampling (pixels stopping at their own noise) farm render is byte-identical to single") {
  Fixture f("farm_adaptive", 32);
  std::ifstream in(f.scene);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("\nspp = 32\n"), 10, "\nspp = 32\nnoise_threshold = 0.05\nmin_samples = 4\n");
  const std::string scene = f.path("adaptive.toml");
  std::ofstream(scene) << text;
  for (const std::string ext : {".png", ".exr"}) {
    const std::string single = f.path("single_adaptive" + ext);
    REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--threads", "1"}, single + ".log", 120) == 0);
    CHECK_FALSE(test_process::same_file(single, f.reference));  // adaptive sampling changed the image
    // PNG at every block size and worker count; EXR (floats on the wire) once.
    for (int block : ext == ".png" ? std::vector<int>{4, 13, 64} : std::vector<int>{13}) {
      for (int workers : ext == ".png" ? std::vector<int>{1, 2} : std::vector<int>{2}) {
        CAPTURE(ext);
        CAPTURE(block);
        CAPTURE(workers);
        const std::string out = f.path("farm_" + std::to_string(block) + "_" + std::to_string(workers) + ext);
        REQUIRE(test_process::run({k_farm, "render", scene, "-o", out, "--policy", "fixed", "--block",
                                   std::to_string(block), "--workers", std::to_string(workers), "--threads", "1"},
                                  out + ".log", 120) == 0);
        CHECK(test_process::same_file(out, single));
      }
    }
  }
  // The same from the command line: --noise-threshold and --min-samples override the scene's keys,
  // reach the workers (the Welcome's settings) and give the same bytes as the keys.
  const std::string flags = f.path("farm_flags.png");
  REQUIRE(test_process::run({k_farm, "render", f.scene, "-o", flags, "--noise-threshold", "0.05", "--min-samples", "4",
                             "--policy", "fixed", "--block", "13", "--workers", "2", "--threads", "1"},
                            flags + ".log", 120) == 0);
  CHECK(test_process::same_file(flags, f.path("single_adaptive.png")));
  // A threshold out of range is refused, naming the option.
  const std::string bad = f.path("bad.png");
  CHECK(test_process::run({k_farm, "single", f.scene, "-o", bad, "--noise-threshold", "2"}, bad + ".log", 60) == 2);
  // Another renderer's scene: refused, saying the options are our renderer's.
  std::ofstream(f.path("ball.pov")) << "camera { location <0, 0, -3> look_at 0 }\nsphere { 0, 1 pigment { rgb 1 } }\n";
  CHECK(test_process::run({k_farm, "single", f.path("ball.pov"), "-o", bad, "--noise-threshold", "0.1"}, bad + ".pov.log",
                          60) == 2);
  std::ifstream pov_log(bad + ".pov.log");
  const std::string said((std::istreambuf_iterator<char>(pov_log)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(said.find("--min-samples and --passes are the farm's own renderer's") != std::string::npos, said);
}

TEST_CASE("farm: with passes farm render writes single's multi-layer EXR byte for byte") {
  Fixture f("farm_passes", 16);
  // Adaptive sampling too: the sample-count pass then differs from pixel to pixel.
  const std::vector<std::string> settings{"--passes", "all", "--noise-threshold", "0.05", "--min-samples", "4"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), settings.begin(), settings.end());
    return args;
  };
  const std::string single = f.path("single.exr");
  REQUIRE(test_process::run(with({k_farm, "single", f.scene, "-o", single, "--threads", "1"}), single + ".log", 120) == 0);
  const std::vector<std::string> channels = exr_channel_names(single);
  CHECK(channels.size() == 18);
  for (const char* name : {"ViewLayer.Combined.R", "ViewLayer.Combined.A", "ViewLayer.Denoising Albedo.B",
                           "ViewLayer.Normal.Z", "ViewLayer.Depth.Z", "ViewLayer.Position.X", "ViewLayer.IndexOB.X",
                           "ViewLayer.IndexMA.X", "ViewLayer.Debug Sample Count.X", "ViewLayer.Variance.X"}) {
    CAPTURE(name);
    CHECK(std::find(channels.begin(), channels.end(), name) != channels.end());
  }
  for (int block : {4, 13, 64}) {
    for (int workers : block == 13 ? std::vector<int>{1, 2} : std::vector<int>{2}) {
      CAPTURE(block);
      CAPTURE(workers);
      const std::string out = f.path("farm_" + std::to_string(block) + "_" + std::to_string(workers) + ".exr");
      REQUIRE(test_process::run(with({k_farm, "render", f.scene, "-o", out, "--policy", "fixed", "--block",
                                      std::to_string(block), "--workers", std::to_string(workers), "--threads", "1"}),
                                out + ".log", 120) == 0);
      CHECK(test_process::same_file(out, single));
    }
  }
  // The factoring policy with its preview, which predicts adaptive sampling's costs from the
  // variance pass (costs/preview_cost_map.cpp): blocks sized by it, the same bytes.
  const std::string factoring = f.path("farm_factoring.exr");
  REQUIRE(test_process::run(with({k_farm, "render", f.scene, "-o", factoring, "--workers", "2", "--threads", "1"}),
                            factoring + ".log", 120) == 0);
  CHECK(test_process::same_file(factoring, single));
  std::ifstream factoring_log(factoring + ".log");
  const std::string planned((std::istreambuf_iterator<char>(factoring_log)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(planned.find("preview for the factoring policy") != std::string::npos, planned);
  // An 8-bit output holds the image only: the passes are not rendered, and the log says so.
  const std::string png = f.path("passes.png");
  REQUIRE(test_process::run({k_farm, "render", f.scene, "-o", png, "--passes", "albedo", "--workers", "1", "--threads",
                             "1"},
                            png + ".log", 120) == 0);
  CHECK(test_process::same_file(png, f.reference));
  std::ifstream png_log(png + ".log");
  const std::string said((std::istreambuf_iterator<char>(png_log)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(said.find("the passes (albedo) are not rendered") != std::string::npos, said);
  // An unknown pass is refused before any work, naming it.
  const std::string bad = f.path("bad.exr");
  CHECK(test_process::run({k_farm, "single", f.scene, "-o", bad, "--passes", "albedo,glow"}, bad + ".log", 60) == 2);
  std::ifstream bad_log(bad + ".log");
  const std::string refused((std::istreambuf_iterator<char>(bad_log)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(refused.find("unknown pass 'glow'") != std::string::npos, refused);
}

TEST_CASE("farm: the factoring policy, with and without its preview, is byte-identical to single") {
  Fixture f("farm_factoring");
  for (bool preview : {true, false}) {
    CAPTURE(preview);
    std::string out = f.path(std::string("farm_") + (preview ? "preview" : "plain") + ".png");
    std::vector<std::string> args{k_farm, "render", f.scene, "-o", out, "--policy", "factoring", "--block", "64",
                                  "--workers", "2", "--threads", "1"};
    if (!preview) args.push_back("--no-preview");
    REQUIRE(test_process::run(args, out + ".log", 120) == 0);
    CHECK(test_process::same_file(out, f.reference));
    std::ifstream log(out + ".log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK((text.find("preview for the factoring policy") != std::string::npos) == preview);
  }
}

TEST_CASE("farm: EXR output over the farm equals single's EXR") {
  Fixture f("farm_exr");
  std::string single = f.path("single.exr"), farm = f.path("farm.exr");
  REQUIRE(test_process::run({k_farm, "single", f.scene, "-o", single}, single + ".log") == 0);
  REQUIRE(test_process::run({k_farm, "render", f.scene, "-o", farm, "--block", "8", "--workers", "2", "--no-compress"},
                            farm + ".log") == 0);
  CHECK(test_process::same_file(single, farm));
}

TEST_CASE("farm: a worker killed with SIGKILL mid-render loses nothing") {
  Fixture f("farm_kill", 3000);
  std::string out = f.path("farm.png"), stats = f.path("stats.json");
  auto master = start_master(f, out, {"--block", "8", "--stats", stats});
  std::string ep = endpoint_from(*master);
  auto victim = start_worker(f, ep, "victim");
  auto survivor = start_worker(f, ep, "survivor");
  // Kill the victim once it has delivered something, so it surely held blocks.
  REQUIRE(victim->wait_for_log("scene loaded", 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  victim->kill(SIGKILL);
  CHECK(master->wait(120) == 0);
  CHECK(survivor->wait(20) == 0);
  CHECK(test_process::same_file(out, f.reference));
  std::string log = master->log();
  INFO(log);
  CHECK(log.find("declared dead") != std::string::npos);
}

TEST_CASE("farm: a worker that starts after the render began takes part") {
  Fixture f("farm_join", 3000);
  std::string out = f.path("farm.png"), stats = f.path("stats.json");
  auto master = start_master(f, out, {"--block", "8", "--stats", stats});
  std::string ep = endpoint_from(*master);
  auto first = start_worker(f, ep, "first");
  REQUIRE(first->wait_for_log("scene loaded", 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto late = start_worker(f, ep, "late");
  CHECK(master->wait(120) == 0);
  CHECK(first->wait(20) == 0);
  CHECK(late->wait(20) == 0);
  CHECK(test_process::same_file(out, f.reference));
  std::ifstream js(stats);
  std::string json((std::istreambuf_iterator<char>(js)), std::istreambuf_iterator<char>());
  // The late worker delivered at least one accepted block.
  std::smatch m;
  REQUIRE(std::regex_search(json, m, std::regex("\"name\": \"late\"[^}]*\"blocks\": ([0-9]+)")));
  CHECK(std::stoi(m[1]) > 0);
}

TEST_CASE("farm: a worker speaking another protocol version is refused with a clear message") {
  Fixture f("farm_incompatible");
  std::string out = f.path("farm.png");
  auto master = start_master(f, out);
  auto bad = start_worker(f, endpoint_from(*master), "old", {"--protocol-version", "999"});
  CHECK(bad->wait(20) == 2);
  CHECK(bad->log().find("refused") != std::string::npos);
  CHECK(master->log().find("refused worker 'old'") != std::string::npos);
  // The master is unharmed: a proper worker still completes the job.
  auto good = start_worker(f, endpoint_from(*master), "good");
  CHECK(master->wait(60) == 0);
  CHECK(test_process::same_file(out, f.reference));
}

TEST_CASE("farm: garbage and truncated frames sent to the master are logged and ignored") {
  Fixture f("farm_garbage", 8);
  std::string out = f.path("farm.png");
  auto master = start_master(f, out);
  std::string ep = endpoint_from(*master);
  {
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 200);
    s.connect(ep);
    std::mt19937 rng(7);
    for (int i = 0; i < 300; ++i) {
      std::vector<uint8_t> junk(rng() % 200);
      for (auto& b : junk) b = static_cast<uint8_t>(rng());
      if (i % 3 == 0) {
        s.send(zmq::buffer(junk), zmq::send_flags::sndmore);  // extra frames
        s.send(zmq::buffer(junk), zmq::send_flags::none);
      } else {
        s.send(zmq::buffer(junk), zmq::send_flags::none);
      }
    }
    s.send(zmq::str_buffer(""), zmq::send_flags::none);  // empty frame
  }
  {
    // Not even ZMTP: raw bytes on the TCP port must not disturb the master either.
    std::string host_port = ep.substr(std::string("tcp://").size());
    int port = std::stoi(host_port.substr(host_port.find(':') + 1));
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const char junk[] = "GET / HTTP/1.0\r\n\r\n\xff\xff\xff\xff\x00\x01garbage";
      (void)::write(fd, junk, sizeof junk);
    }
    ::close(fd);
  }
  auto worker = start_worker(f, ep, "worker");
  CHECK(master->wait(60) == 0);
  CHECK(worker->wait(20) == 0);
  CHECK(test_process::same_file(out, f.reference));
  CHECK(master->log().find("ignored a bad message") != std::string::npos);
}

TEST_CASE("farm: bad command lines and scenes exit with code 2 and a message") {
  Fixture f("farm_cli");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("x.jpg")}, f.path("a.log")) == 2);
  CHECK(test_process::run({k_farm, "render", f.path("missing.toml"), "-o", f.path("x.png")}, f.path("b.log")) == 2);
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("x.png"), "--block", "0"}, f.path("c.log")) == 2);
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("x.png"), "--policy", "magic"}, f.path("d.log")) == 2);
  CHECK(test_process::run({k_farm, "bogus"}, f.path("e.log")) == 2);
  std::ifstream a(f.path("a.log"));
  std::string text((std::istreambuf_iterator<char>(a)), std::istreambuf_iterator<char>());
  CHECK(text.find("'.jpg'") != std::string::npos);
}

TEST_CASE("farm: every bundled scene renders byte-identically through the farm, also with every pass and adaptive sampling (small size)" * doctest::test_suite("slow")) {
  auto dir = test_paths::temp_dir("farm_bundled");
  for (const auto& entry : fs::directory_iterator(test_paths::project("scenes"))) {
    if (entry.path().extension() != ".toml") continue;
    std::string name = entry.path().stem().string();
    CAPTURE(name);
    std::vector<std::string> common = {"--width", "40", "--height", "30", "--frame", "1",
                                       "--assets", test_paths::shared_scenes()};
    if (name == "bunny" && !test_paths::have_shared_scenes()) {
      MESSAGE("skipping bunny: ../shared/scenes is absent");
      continue;
    }
    std::string single = (dir / (name + "_single.png")).string(), farm = (dir / (name + "_farm.png")).string();
    std::vector<std::string> a = {k_farm, "single", entry.path().string(), "-o", single, "--spp", "2"};
    a.insert(a.end(), common.begin(), common.end());
    REQUIRE(test_process::run(a, single + ".log") == 0);
    std::vector<std::string> b = {k_farm, "render", entry.path().string(), "-o", farm, "--spp", "2", "--workers", "2", "--block", "8"};
    b.insert(b.end(), common.begin(), common.end());
    REQUIRE(test_process::run(b, farm + ".log") == 0);
    CHECK(test_process::same_file(single, farm));
    // Every pass into a multi-layer EXR, pixels stopping on their own noise, blocks of 13 (not
    // aligned to the 4x4 packets), the factoring policy's adaptive-aware preview.
    const std::vector<std::string> layered = {"--spp", "8", "--passes", "all", "--noise-threshold", "0.05"};
    std::string single_exr = (dir / (name + "_single.exr")).string(), farm_exr = (dir / (name + "_farm.exr")).string();
    std::vector<std::string> c = {k_farm, "single", entry.path().string(), "-o", single_exr};
    c.insert(c.end(), common.begin(), common.end());
    c.insert(c.end(), layered.begin(), layered.end());
    REQUIRE(test_process::run(c, single_exr + ".log") == 0);
    std::vector<std::string> d = {k_farm, "render", entry.path().string(), "-o", farm_exr, "--workers", "2", "--block", "13"};
    d.insert(d.end(), common.begin(), common.end());
    d.insert(d.end(), layered.begin(), layered.end());
    REQUIRE(test_process::run(d, farm_exr + ".log") == 0);
    CHECK(test_process::same_file(single_exr, farm_exr));
  }
  fs::remove_all(dir);
}

TEST_CASE("farm: a scene the workers cannot load ends the local render with an error, not a hang") {
  Fixture f("farm_bad_mesh");
  {
    std::ofstream bad(f.path("broken.ply"));
    bad << "ply\nformat ascii 1.0\nelement vertex 3\nend_header\nnot numbers at all\n";
    std::ofstream scene(f.path("bad.toml"));
    scene << "[[material]]\nname = \"m\"\ntype = \"diffuse\"\n[[object]]\ntype = \"mesh\"\npath = \"broken.ply\"\n"
             "material = \"m\"\n";
  }
  std::string out = f.path("bad.png");
  // --policy seed: no preview, so the master does not load the mesh and the workers find it.
  Child render({k_farm, "render", f.path("bad.toml"), "-o", out, "--workers", "2", "--threads", "1", "--policy", "seed"},
               out + ".log");
  CHECK(render.wait(60) == 2);  // the scene's fault, as for single (the master now ends the job at once)
  CHECK(render.log().find("cannot load the job's scene") != std::string::npos);
  CHECK_MESSAGE(render.log().find("error: the scene cannot be loaded (reported by worker") != std::string::npos, render.log());
  CHECK_FALSE(fs::exists(out));
  // With the default policy the master's preview loads the mesh and refuses the scene itself.
  Child preview({k_farm, "render", f.path("bad.toml"), "-o", out, "--workers", "2"}, out + ".preview.log");
  CHECK(preview.wait(60) == 2);
  CHECK_MESSAGE(preview.log().find("error: " + f.path("bad.toml") + ":4:1: cannot load mesh") != std::string::npos,
                preview.log());
  CHECK(preview.log().find("listening on") == std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // farm single reports the same scene as bad input.
  CHECK(test_process::run({k_farm, "single", f.path("bad.toml"), "-o", out}, out + ".single.log") == 2);
}

TEST_CASE("farm: the master's scheduler trace replays to the same assignments and decisions") {
  // The same calls fed to a fresh scheduler must give the same blocks, outcomes and halvings:
  // the check behind "the simulator and the master decide alike for the same events".
  Fixture f("farm_trace", 48);  // slow enough per block for a 1 ms waiting time to halve
  const std::string out = f.path("farm.png"), trace = f.path("trace.txt"), stats = f.path("stats.json");
  REQUIRE(test_process::run({k_farm, "render", f.scene, "-o", out, "--workers", "2", "--threads", "1", "--block", "32",
                             "--policy", "seed", "--wait", "0.001", "--trace", trace, "--stats", stats},
                            f.path("render.log")) == 0);
  CHECK(test_process::same_file(out, f.reference));
  std::ifstream in(trace);
  REQUIRE(in);
  CHECK(farm::replay_trace(in).ok());
  std::ifstream st(stats);
  std::string json((std::istreambuf_iterator<char>(st)), std::istreambuf_iterator<char>());
  CHECK(json.find("\"reason\"") != std::string::npos);  // the trace held halvings to check
  // The default policy (factoring with the preview's block costs): the trace carries the costs
  // the scheduler asked for, so it replays too.
  const std::string trace2 = f.path("trace_default.txt"), out2 = f.path("farm_default.png");
  REQUIRE(test_process::run({k_farm, "render", f.scene, "-o", out2, "--workers", "2", "--threads", "1", "--trace",
                             trace2},
                            f.path("render_default.log")) == 0);
  CHECK(test_process::same_file(out2, f.reference));
  std::ifstream in2(trace2);
  std::string text((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  CHECK(text.find(" block-cost\n") != std::string::npos);
  CHECK(text.find("\nK ") != std::string::npos);
  std::istringstream replay(text);
  const farm::Status replayed = farm::replay_trace(replay);
  CHECK_MESSAGE(replayed.ok(), replayed.message());
}

TEST_CASE("farm: plan recommends settings, master --auto uses them, a bad cluster file is refused") {
  Fixture f("farm_plan", 8);
  const std::string cluster = f.path("cluster.toml");
  {
    std::ofstream c(cluster);
    c << "[[group]]\ncount = 2\nspeed = [0.5, 1.0]\nlatency_ms = 1\n";
  }
  const std::string plan_log = f.path("plan.log");
  REQUIRE(test_process::run({k_farm, "plan", f.scene, "--cluster", cluster, "--threads", "1"}, plan_log) == 0);
  std::ifstream pl(plan_log);
  std::string text((std::istreambuf_iterator<char>(pl)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find("Recommended: --policy ") != std::string::npos);
  CHECK(text.find("predicted render window") != std::string::npos);

  const std::string out = f.path("auto.png");
  auto master = start_master(f, out, {"--auto", cluster});
  auto worker = start_worker(f, endpoint_from(*master), "auto-worker");
  CHECK(master->wait(60) == 0);
  CHECK(worker->wait(20) == 0);
  CHECK(master->log().find("--auto chose --policy") != std::string::npos);
  CHECK(test_process::same_file(out, f.reference));

  {
    std::ofstream c(cluster);
    c << "[[group]]\ncount = 2\nsped = 1\n";
  }
  REQUIRE(test_process::run({k_farm, "plan", f.scene, "--cluster", cluster}, plan_log) == 2);
  std::ifstream bad(plan_log);
  std::string err((std::istreambuf_iterator<char>(bad)), std::istreambuf_iterator<char>());
  CHECK(err.find("cluster.toml:3") != std::string::npos);
  CHECK(err.find("speed") != std::string::npos);
}

TEST_SUITE_END();
