// The errors a user sees (docs/failures.md, "When things go wrong"): each row of that table is a test
// here, with the exact message and exit code. Keep the two in step.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "farm/farm_fixture.h"
#include "protocol/protocol.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

struct Outcome {
  int code = -1;
  std::string log;
};

Outcome run(const std::vector<std::string>& args, const std::string& log_path, double timeout = 60) {
  Child c(args, log_path);
  Outcome o;
  o.code = c.wait(timeout);
  o.log = c.log();
  return o;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A loopback TCP port held by this process until the object goes: what another program met.
struct BusyPort {
  int fd = -1;
  int port = 0;
  BusyPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 1) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0);
    port = ntohs(a.sin_port);
  }
  ~BusyPort() { ::close(fd); }
};

// A read-only tmpfs at `dir` (root only); false with a message if it cannot be mounted here.
bool mount_read_only(const fs::path& dir) {
  fs::create_directories(dir);
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") != 0) {
    MESSAGE("skipped: cannot mount a read-only tmpfs here (needs root): " << std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("failure table: master unreachable") {
  Fixture f("fail_unreachable");
  // Port 1 on loopback: nothing listens there.
  Outcome o = run({k_farm, "worker", "--connect", "tcp://127.0.0.1:1", "--give-up-after", "1", "--cache", f.cache()},
                  f.path("w.log"), 30);
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: no master at tcp://127.0.0.1:1 for "), o.log);
  CHECK(contains(o.log, "s; giving up"));
}

TEST_CASE("failure table: scene missing") {
  Fixture f("fail_missing");
  Outcome o = run({k_farm, "render", f.path("nope.toml"), "-o", f.path("x.png")}, f.path("r.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: cannot open scene file '" + f.path("nope.toml") + "'"), o.log);
}

TEST_CASE("failure table: bad scene") {
  Fixture f("fail_bad_scene");
  { std::ofstream(f.path("bad.toml")) << "[render]\nwidth = 10\nheigth = 5\n"; }
  Outcome o = run({k_farm, "master", f.path("bad.toml"), "-o", f.path("x.png"), "--bind", "tcp://127.0.0.1:*"}, f.path("m.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: " + f.path("bad.toml") + ":3:1: unknown key 'heigth' in [render]; did you mean 'height'?"),
                o.log);
}

TEST_CASE("failure table: a scene only a worker finds bad ends the job (the master waited forever)") {
  // An index past the vertices is found when the mesh is loaded, which the master does not do:
  // the worker reports it, and since every worker loads the same bytes, the job ends.
  Fixture f("fail_worker_scene");
  {
    std::ofstream(f.path("bad.gltf"))
        << R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
        << R"("meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1}]}],)"
        << R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},)"
        << R"({"bufferView":1,"componentType":5125,"count":3,"type":"SCALAR"}],)"
        << R"("bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":12}],)"
        << R"("buffers":[{"byteLength":48,"uri":"data:application/octet-stream;base64,)"
        << R"(AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAACAPwAAgD8AAAAAAAAAAAEAAAAHAAAA"}]})";
  }
  // --policy seed: no preview render, which would load the mesh at the master and refuse it there.
  Child master({k_farm, "master", f.path("bad.gltf"), "-o", f.path("x.png"), "--bind", "tcp://127.0.0.1:*", "--width", "16",
                "--height", "16", "--policy", "seed"},
               f.path("m.log"));
  REQUIRE(master.wait_for_log("listening on", 20));
  auto worker = start_worker(f, endpoint_from(master), "w1");
  const int code = master.wait(30);
  CHECK_MESSAGE(code == 2, master.log());
  CHECK_MESSAGE(contains(master.log(), "error: the scene cannot be loaded (reported by worker 1 'w1', names relative to the "
                                       "scene's folder): bad.gltf: cannot load mesh 'bad.gltf': index 7 refers past the 3 "
                                       "vertices: no image written"),
                master.log());
  CHECK_FALSE(fs::exists(f.path("x.png")));
  CHECK(worker->wait(20) != 0);
}

TEST_CASE("failure table: output folder missing") {
  Fixture f("fail_out_dir");
  Outcome o = run({k_farm, "render", f.scene, "-o", f.path("no/such/dir/x.png")}, f.path("r.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: output folder '" + f.path("no/such/dir") + "' does not exist"), o.log);
}

TEST_CASE("failure table: incompatible version") {
  Fixture f("fail_version");
  auto master = start_master(f, f.path("x.png"), {"--no-journal"});
  Outcome o = run({k_farm, "worker", "--connect", endpoint_from(*master), "--protocol-version", "99", "--once", "--cache",
                   f.cache(), "--give-up-after", "10"},
                  f.path("w.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: the master refused this worker: protocol version 99 is not supported; master speaks " +
                                    std::to_string(farm::proto::k_protocol_version)),
                o.log);
}

TEST_CASE("failure table: disk full on output, then --resume writes the image without rendering again") {
  Fixture f("fail_disk_full");
  const fs::path small = f.dir / "small";
  fs::create_directories(small);
  if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=256k") != 0) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root): " << std::strerror(errno));
    return;
  }
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{small};
  // The disk fills up once the master has checked its output (a full one is refused before
  // rendering: messages_test.cpp); the journal lives elsewhere, so only the image cannot be written.
  const std::string out = (small / "out.png").string(), journal = f.path("out.journal");
  auto master = start_master(f, out, {"--journal", journal});
  {
    std::ofstream filler(small / "filler", std::ios::binary);
    std::vector<char> chunk(4096, 0);
    for (int i = 0; i < 1000 && filler.write(chunk.data(), chunk.size()); ++i) {
    }
  }
  auto worker = start_worker(f, endpoint_from(*master), "w1");
  Outcome o;
  o.code = master->wait(60);
  o.log = master->log();
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: cannot write '" + out + "': "), o.log);
  CHECK(contains(o.log, "error: every rendered block is kept in the journal '" + journal +
                            "': make room (or fix the path) and run the same command with --resume"));
  CHECK_FALSE(fs::exists(out));  // no empty or partial image left behind
  fs::remove(small / "filler");
  std::vector<std::string> args = {k_farm, "render", f.scene, "-o", out, "--journal", journal, "--workers", "1", "--resume"};
  o = run(args, f.path("resume.log"));
  CHECK_MESSAGE(o.code == 0, o.log);
  CHECK(contains(o.log, "100.0% of the pixels, already rendered"));
  CHECK(test_process::same_file(out, f.reference));
}

namespace {

// A tmpfs of 256 KiB at `dir` for the life of the object; `ok` false (with the reason) where
// mounting is not permitted, so the caller can skip.
struct SmallDisk {
  fs::path dir;
  bool ok = false;
  std::string why;
  explicit SmallDisk(fs::path d) : dir(std::move(d)) {
    fs::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=256k") == 0;
    if (!ok) why = std::strerror(errno);
  }
  ~SmallDisk() {
    if (ok) ::umount2(dir.c_str(), MNT_DETACH);
  }
};

// Files named like a cache object's temporary file (objects/<hash>.tmp.<pid>.<random>) under `dir`.
int temporary_files(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++n;
  return n;
}

}  // namespace

TEST_CASE("failure table: worker cache disk full while fetching an asset") {
  Fixture f("fail_cache_full");
  SmallDisk disk(f.dir / "small");
  if (!disk.ok) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root): " << disk.why);
    return;
  }
  // A mesh of ~400 KB: the worker's cache (on the 256 KiB disk) passes its probe, then cannot
  // hold the file. Unused vertices pad it; the one triangle keeps it a valid mesh.
  {
    std::ofstream obj(f.path("big.obj"));
    for (int i = 0; i < 40000; ++i) obj << "v 0.125 0.25 0.5\n";
    obj << "v -1 0 -3\nv 1 0 -3\nv 0 1 -3\nf 40001 40002 40003\n";
    std::ofstream(f.scene, std::ios::app) << "[[object]]\ntype = \"mesh\"\npath = \"big.obj\"\nmaterial = \"gold\"\n";
  }
  REQUIRE(fs::file_size(f.path("big.obj")) > 300 * 1024);
  auto master = start_master(f, f.path("x.png"), {"--no-journal"});
  const std::string cache = (disk.dir / "cache").string();
  Outcome o = run({k_farm, "worker", "--connect", endpoint_from(*master), "--once", "--cache", cache, "--give-up-after", "10"},
                  f.path("w.log"), 30);
  CHECK(o.code == 1);
  // A local failure: the path and the OS reason, and no blame on the master.
  CHECK_MESSAGE(contains(o.log, "error: cannot store an asset in this worker's cache: cannot write '" + cache + "/objects/"),
                o.log);
  CHECK(contains(o.log, ".tmp."));
  CHECK(contains(o.log, "': No space left on device; the partial file was removed: make room in '" + cache +
                            "' or pass another --cache"));
  CHECK_FALSE(contains(o.log, "from the master"));
  CHECK(temporary_files(disk.dir) == 0);  // the cache is not left full
}

TEST_CASE("failure table: worker cache folder unusable (probed before joining)") {
  Fixture f("fail_cache_probe");
  SmallDisk disk(f.dir / "small");
  if (!disk.ok) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root): " << disk.why);
    return;
  }
  const std::string cache = (disk.dir / "cache").string();
  fs::create_directories(disk.dir / "cache" / "objects");
  {
    std::ofstream filler(disk.dir / "filler", std::ios::binary);
    std::vector<char> chunk(4096, 0);
    for (int i = 0; i < 1000 && filler.write(chunk.data(), chunk.size()); ++i) {
    }
  }
  // Nothing listens on port 1: without the probe the worker would retry until --give-up-after.
  Outcome o = run({k_farm, "worker", "--connect", "tcp://127.0.0.1:1", "--cache", cache, "--give-up-after", "5"},
                  f.path("w.log"), 30);
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: cannot use the cache folder '" + cache + "': cannot write '" + cache +
                                    "/objects/.probe."),
                o.log);
  CHECK(contains(o.log, "': No space left on device"));
  CHECK_FALSE(contains(o.log, "no master at"));  // refused before joining
  CHECK(temporary_files(disk.dir) == 0);
  for (const auto& e : fs::directory_iterator(disk.dir / "cache" / "objects")) FAIL("left behind: " << e.path());
  // A cache folder that cannot be created (a file is in the way): the same refusal.
  std::ofstream(f.path("a_file")) << "x";
  o = run({k_farm, "worker", "--connect", "tcp://127.0.0.1:1", "--cache", f.path("a_file") + "/cache", "--give-up-after", "5"},
          f.path("w2.log"), 30);
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: cannot use the cache folder '" + f.path("a_file") + "/cache': "), o.log);
}

TEST_CASE("failure table: all workers lost") {
  Fixture f("fail_all_lost", 1500);
  // `farm master --give-up-after`: no live worker for that long ends the job, journal kept.
  // The clock runs from the master's start, so the worker must join within it: 4 s, not 1,
  // because a loaded CI machine once took over a second to start the worker process.
  auto master = start_master(f, f.path("x.png"), {"--give-up-after", "4", "--block", "8"});
  auto worker = start_worker(f, endpoint_from(*master), "only");
  REQUIRE(master->wait_for_log("'only' joined", 20));
  // Lose it once it has delivered: the journal then has something to keep.
  const std::string journal = f.path("x.png.journal");
  const uintmax_t empty = fs::file_size(journal);
  for (int i = 0; i < 2000 && fs::file_size(journal) == empty; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(master->poll() == -1);
  worker->kill(SIGKILL);
  CHECK(master->wait(20) == 1);
  CHECK_MESSAGE(contains(master->log(), "error: no worker for 4 s (--give-up-after): no image written; the "), master->log());
  CHECK(contains(master->log(), "are kept in the journal '" + f.path("x.png") +
                                    ".journal': run the same command with --resume to continue"));
}

TEST_CASE("failure table: auth failure") {
  Fixture f("fail_auth");
  for (const char* name : {"master", "worker", "stranger"})
    REQUIRE(run({k_farm, "keygen", f.path(name)}, f.path(std::string(name) + ".keygen.log")).code == 0);
  auto master = start_master(f, f.path("x.png"), {"--key", f.path("master.key"), "--allow", f.path("worker.pub")});
  const std::string ep = endpoint_from(*master);
  Outcome o = run({k_farm, "worker", "--connect", ep, "--key", f.path("stranger.key"), "--master-key", f.path("master.pub"),
                   "--once", "--cache", f.cache(), "--give-up-after", "2"},
                  f.path("w.log"));
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "warning: cannot join " + ep +
                                    ": the master refused this worker's key (status 400): is this worker's public key "
                                    "among those the master allows?"),
                o.log);
  CHECK(contains(o.log, "error: no master at " + ep + " for "));
  CHECK(master->wait_for_log("warning: refused a worker with CURVE key ", 5));
  CHECK(contains(master->log(), ": not among the worker keys this master allows (logged once per key)"));
}

TEST_CASE("failure table: an endpoint ZeroMQ would take wrongly is refused, naming what is wrong") {
  // ZeroMQ took the port modulo 65536 (99999 listened on 34463) and said "No such device" for
  // tcp://localhost:0 and for an IPv6 address (found by the second adversarial pass).
  Fixture f("fail_endpoint");
  const std::string out = f.path("x.png");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"master", f.scene, "-o", out, "--bind", "tcp://127.0.0.1:99999"},
       "error: --bind: 'tcp://127.0.0.1:99999': port '99999' is not a TCP port (0 to 65535, or * for any free one)"},
      {{"master", f.scene, "-o", out, "--bind", "tcp://localhost:0"},
       "error: --bind: 'tcp://localhost:0': 'localhost' is not an address or a network interface of this machine"},
      {{"master", f.scene, "-o", out, "--bind", "udp://127.0.0.1:5"}, "error: --bind: 'udp://127.0.0.1:5' is not a tcp:// endpoint"},
      {{"worker", "--connect", "tcp://127.0.0.1:0"}, "error: --connect: 'tcp://127.0.0.1:0': port '0' is not a TCP port (1 to 65535)"},
      {{"worker", "--connect", "tcp://[::g]:5"}, "error: --connect: 'tcp://[::g]:5': '[::g]' is not an IPv6 address"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {k_farm};
    args.insert(args.end(), c.args.begin(), c.args.end());
    Outcome o = run(args, f.path("endpoint.log"));
    CHECK(o.code == 2);
    CHECK_MESSAGE(contains(o.log, c.message), o.log);
    CHECK_FALSE(fs::exists(out));
  }
  // An IPv6 loopback endpoint works end to end (the socket gets ZMQ_IPV6).
  Child master({k_farm, "master", f.scene, "-o", out, "--bind", "tcp://[::1]:*", "--no-journal"}, f.path("m6.log"));
  REQUIRE(master.wait_for_log("listening on", 20));
  std::smatch m;
  const std::string log = master.log();
  REQUIRE_MESSAGE(std::regex_search(log, m, std::regex("listening on (tcp://\\[::1\\]:[0-9]+)")), log);
  auto worker = start_worker(f, m[1], "w6");
  CHECK_MESSAGE(master.wait(60) == 0, master.log());
  CHECK(test_process::same_file(out, f.reference));
}

TEST_CASE("failure table: master cannot bind (--bind or --http): exit 1 (the OS refused, not bad input), no journal or image left behind") {
  Fixture f("fail_bind");
  BusyPort busy;
  const std::string taken = "127.0.0.1:" + std::to_string(busy.port);
  const std::string out = f.path("x.png"), journal = out + ".journal";
  Outcome o = run({k_farm, "master", f.scene, "-o", out, "--bind", "tcp://" + taken}, f.path("bind.log"));
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: cannot bind tcp://" + taken + ": Address already in use"), o.log);
  CHECK_FALSE(fs::exists(journal));
  CHECK_FALSE(fs::exists(out));
  o = run({k_farm, "render", f.scene, "-o", out, "--http", taken}, f.path("http.log"));
  CHECK(o.code == 1);
  CHECK_MESSAGE(contains(o.log, "error: --http: cannot listen on " + taken + ": Address already in use"), o.log);
  CHECK_FALSE(fs::exists(journal));
  CHECK_FALSE(fs::exists(out));
  // Nothing was left to refuse the next run on a free port.
  o = run({k_farm, "render", f.scene, "-o", out, "--workers", "1"}, f.path("free.log"));
  CHECK_MESSAGE(o.code == 0, o.log);
  CHECK(test_process::same_file(out, f.reference));
  for (const auto& e : fs::directory_iterator(f.dir))  // the probes' files are removed at once
    CHECK_MESSAGE(e.path().filename().string().find("probe") == std::string::npos, e.path());
}

TEST_CASE("failure table: an animation's frame output that cannot be written is refused before rendering") {
  // Found by the second adversarial pass: render probed only the first name, so frame 3 failed
  // after frames 1 and 2 were written, and left a journal that asked the next run for --resume.
  Fixture f("fail_frame_output");
  const std::string out = f.path("orb.png");
  fs::create_directories(f.path("orb_0003.png"));  // a folder where frame 3's image goes
  Outcome o = run({k_farm, "render", test_paths::project("scenes/orbit.toml"), "-o", out, "--width", "8", "--height",
                   "6", "--spp", "1", "--workers", "1"},
                  f.path("r.log"));
  CHECK_MESSAGE(o.code == 2, o.log);
  CHECK_MESSAGE(contains(o.log, "error: cannot write output image '" + f.path("orb_0003.png") + "'"), o.log);
  CHECK_FALSE(fs::exists(f.path("orb_0001.png")));
  CHECK_FALSE(fs::exists(out + ".journal"));
}

TEST_CASE("failure table: output folder read-only: refused before binding, naming the path and the reason") {
  Fixture f("fail_read_only");
  const fs::path ro = f.dir / "ro";
  if (!mount_read_only(ro)) return;
  struct Unmount {
    fs::path p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{ro};
  const std::string out = (ro / "x.png").string();
  // Without a journal nothing else would notice before the image is written, after the render.
  Outcome o = run({k_farm, "master", f.scene, "-o", out, "--bind", "tcp://127.0.0.1:*", "--no-journal"}, f.path("m.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: cannot write output image '" + out + "': folder '" + ro.string() +
                                    "': Read-only file system"),
                o.log);
  CHECK_FALSE(contains(o.log, "listening on"));
  // The journal elsewhere than the image, in the read-only folder.
  const std::string journal = (ro / "x.journal").string();
  o = run({k_farm, "render", f.scene, "-o", f.path("x.png"), "--journal", journal}, f.path("r.log"));
  CHECK(o.code == 2);
  CHECK_MESSAGE(contains(o.log, "error: cannot write journal '" + journal + "': folder '" +
                                    ro.string() + "': Read-only file system"),
                o.log);
  CHECK_FALSE(contains(o.log, "listening on"));
  CHECK_FALSE(fs::exists(f.path("x.png")));
}

TEST_SUITE_END();
