// Faults in another renderer's process (issue 27): `blender` or `povray` killed with SIGKILL in
// the middle of a farm render costs the blocks it held only. They fail on their worker, are
// leased again, the worker starts a new renderer process for its next block, and the image is
// byte-identical to `farm single`'s. Skips, saying so, without the renderer.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "farm/backend_scenes.h"
#include "farm/launched_workers.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
using backend_scenes::descendants_named;
using backend_scenes::have_program;

namespace {

// Runs `render` (a farm render command) and, once `loaded` workers have loaded the scene, sends
// `signal` to one `comm` process below it every `every` seconds, `kills` times or until the
// render ends (SIGSTOP: a renderer that hangs). Returns the render's exit code and the count.
std::pair<int, int> render_killing(const std::vector<std::string>& render, const std::string& log, const std::string& comm,
                                   int loaded, double every, int kills, int signal = SIGKILL) {
  test_process::Child farm(render, log);
  int killed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  auto loaded_workers = [&] {
    const std::string text = farm.log();
    int n = 0;
    for (size_t at = text.find("scene loaded"); at != std::string::npos; at = text.find("scene loaded", at + 1)) ++n;
    return n;
  };
  while (farm.poll() < 0 && loaded_workers() < loaded && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  while (farm.poll() < 0 && killed < kills && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::duration<double>(every));
    const std::vector<pid_t> victims = descendants_named(farm.pid(), comm);
    if (!victims.empty() && ::kill(victims.front(), signal) == 0) ++killed;
  }
  return {farm.wait(240), killed};
}

}  // namespace

TEST_CASE("backend faults: blender killed mid-render costs its block only, and the image is still exact") {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_faults");
  const std::string scene = backend_scenes::make_blender_scene(dir, 64, 48, 512);
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--frame", "1"}, (dir / "single.log").string(), 240) == 0);
  const auto [rc, killed] = render_killing({k_farm, "render", scene, "-o", render, "--frame", "1", "--workers", "2",
                                            "--policy", "fixed", "--block", "8"},
                                           (dir / "render.log").string(), "blender", 2, 0.4, 2);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK(killed >= 1);
  CHECK_MESSAGE(log.find("blender (the bridge process) was killed by signal 9") != std::string::npos, log);
  CHECK(test_process::same_file(single, render));
  fs::remove_all(dir);
}

TEST_CASE("backend faults: a blender that hangs mid-block is stopped once another worker commits its block") {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  const fs::path dir = test_paths::temp_dir("blender_hangs");
  // Long enough (about 3 s of CPU) that the stop lands while blocks are still being rendered.
  const std::string scene = backend_scenes::make_blender_scene(dir, 64, 48, 1024);
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--frame", "1"}, (dir / "single.log").string(), 240) == 0);
  // SIGSTOP: the process neither renders nor dies. Its block is reassigned to the other worker;
  // when that result is committed the master cancels it here, and the worker stops the process.
  const auto [rc, stopped] = render_killing({k_farm, "render", scene, "-o", render, "--frame", "1", "--workers", "2",
                                             "--policy", "fixed", "--block", "8"},
                                            (dir / "render.log").string(), "blender", 2, 0.1, 1, SIGSTOP);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK(stopped == 1);
  CHECK_MESSAGE(log.find("was stopped by the farm (its block is no longer wanted)") != std::string::npos, log);
  CHECK(test_process::same_file(single, render));
  fs::remove_all(dir);
}

TEST_CASE("backend faults: povray killed mid-block costs that block only, and the image is still exact") {
  const std::string chess2 = "/usr/share/doc/povray/examples/advanced/chess2.pov";
  if (!have_program("povray") || !fs::exists(chess2)) {
    MESSAGE("skipped: needs Debian's povray and povray-examples (" << chess2 << ")");
    return;
  }
  const fs::path dir = test_paths::temp_dir("povray_faults");
  fs::copy_file(chess2, dir / "chess2.pov");
  const std::string scene = (dir / "chess2.pov").string();
  const std::vector<std::string> look = {"--width", "48", "--height", "36", "--renderer-options", "+A0.3"};
  std::vector<std::string> single_cmd = {k_farm, "single", scene, "-o", (dir / "single.png").string()};
  single_cmd.insert(single_cmd.end(), look.begin(), look.end());
  REQUIRE(test_process::run(single_cmd, (dir / "single.log").string(), 240) == 0);
  std::vector<std::string> render_cmd = {k_farm, "render", scene, "-o", (dir / "render.png").string(), "--workers", "2",
                                         "--policy", "fixed", "--block", "16"};
  render_cmd.insert(render_cmd.end(), look.begin(), look.end());
  const auto [rc, killed] = render_killing(render_cmd, (dir / "render.log").string(), "povray", 2, 0.3, 2);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK(killed >= 1);
  CHECK_MESSAGE(log.find("povray was killed by signal 9") != std::string::npos, log);
  CHECK(test_process::same_file((dir / "single.png").string(), (dir / "render.png").string()));
  fs::remove_all(dir);
}

namespace {

// A `povray` for PATH that answers --version and renders the worker's 4x4 probe (rows 1..4) as
// Debian's does but, for a block, runs `crash` (shell lines that may `kill -9 $$`) first. It
// counts blocks in marker folders beside the test and tells workers apart by their pid, so the
// farm runs it unconfined (--no-sandbox): confined, it could do neither (sandbox_test.cpp). Returns
// the folder to put first on PATH. Blocks must not end at row 4 (use blocks of 8 or more).
std::string crashing_povray(const fs::path& dir, const std::string& crash) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream script(bin / "povray");
  script << "#!/bin/sh\n"
         << "case \"$1\" in --version) exec /usr/bin/povray \"$@\" ;; esac\n"
         << "case \" $* \" in *' +ER4 '*) exec /usr/bin/povray \"$@\" ;; esac\n"
         << crash << "exec /usr/bin/povray \"$@\"\n";
  script.close();
  fs::permissions(bin / "povray", fs::perms::owner_all);
  return bin.string();
}

// Crash code: the first `n` blocks of the run (counted with mkdir, which is atomic).
std::string first_blocks(const fs::path& dir, int n) {
  return "for i in $(seq 1 " + std::to_string(n) + "); do\n  if mkdir '" + (dir / "crash-").string() +
         "'$i 2>/dev/null; then kill -9 $$; fi\ndone\n";
}

// Crash code: every block whose region has all of `switches` (e.g. "+SR1 +SC17").
std::string region(const std::string& switches) {
  std::string test;
  std::istringstream in(switches);
  for (std::string sw; in >> sw;) test += "case \" $* \" in *' " + sw + " '*) ;; *) exec /usr/bin/povray \"$@\" ;; esac\n";
  return test + "kill -9 $$\n";
}

// Crash code: every block of the first worker to render one (its povray's parent process).
std::string one_worker(const fs::path& dir) {
  const std::string mark = (dir / "broken-worker").string();
  return "mkdir '" + mark + "' 2>/dev/null && echo $PPID > '" + mark + "/pid'\n" +
         "[ \"$(cat '" + mark + "/pid' 2>/dev/null)\" = \"$PPID\" ] && kill -9 $$\n";
}

const char k_ball[] =
    "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
    "sphere { 0, 1 pigment { rgb <1, 0.4, 0.1> } }\n";

// The fake povray above runs Debian's for the real work.
bool skip_without_povray() {
  if (have_program("povray") && fs::exists("/usr/bin/povray")) return false;
  MESSAGE("skipped: needs Debian's povray");
  return true;
}

// A fresh folder holding ball.pov (k_ball).
fs::path ball_scene_dir(const std::string& name) {
  const fs::path dir = test_paths::temp_dir(name);
  std::ofstream(dir / "ball.pov") << k_ball;
  return dir;
}

}  // namespace

TEST_CASE("backend faults: a block whose renderer crashed is given back at once, even to the one worker there is") {
  if (skip_without_povray()) return;
  const fs::path dir = ball_scene_dir("povray_one_worker_crash");
  const std::string scene = (dir / "ball.pov").string();
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--width", "32", "--height", "24",
                             "--renderer-options", "+BS8"},
                            (dir / "single.log").string(), 120) == 0);
  // One worker, whose povray crashes on its first two renders. The worker holds those leases; the
  // scheduler never gives a worker a copy of a block it holds, so unless the worker says the block
  // failed, its lease stays open with no one else to take it, and the render never ends.
  const std::string path = crashing_povray(dir, first_blocks(dir, 2)) + ":/usr/bin:/bin";
  const int rc = test_process::run({"/usr/bin/env", "PATH=" + path, k_farm, "render", "--no-sandbox", scene, "-o", render, "--width", "32",
                                    "--height", "24", "--workers", "1", "--policy", "fixed", "--block", "8",
                                    "--renderer-options", "+BS8"},
                                   (dir / "render.log").string(), 120);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK_MESSAGE(log.find("could not render block 8x8") != std::string::npos, log);
  CHECK_MESSAGE(log.find("(failure 1 of at most 5): povray was killed by signal 9") != std::string::npos, log);
  CHECK(test_process::same_file(single, render));
  fs::remove_all(dir);
}

TEST_CASE("backend faults: a block that fails on every render ends the job after 5 tries, naming it and why") {
  if (skip_without_povray()) return;
  const fs::path dir = ball_scene_dir("povray_always_crashes");
  const std::string render = (dir / "render.png").string();
  // Only the block at 16,0 crashes: both workers render the others, so neither fails 3 in a row
  // before that block has failed 5 times (6 failures would be needed to bench both).
  const std::string path = crashing_povray(dir, region("+SR1 +SC17")) + ":/usr/bin:/bin";
  const int rc = test_process::run({"/usr/bin/env", "PATH=" + path, k_farm, "render", "--no-sandbox", (dir / "ball.pov").string(), "-o",
                                    render, "--width", "32", "--height", "24", "--workers", "2", "--policy", "fixed",
                                    "--block", "16", "--renderer-options", "+BS16"},
                                   (dir / "render.log").string(), 120);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  CHECK_MESSAGE(rc == 1, log);
  CHECK_MESSAGE(std::regex_search(log, std::regex("block 16x16 at 16,0 of frame 1 failed 5 times, last on "
                                                  "worker [12] '[^']+': povray was killed by signal 9: no image written")),
                log);
  CHECK_FALSE(fs::exists(render));
  fs::remove_all(dir);
}

TEST_CASE("backend faults: a worker whose renderer fails every block sits the job out, and the others finish it exact") {
  if (skip_without_povray()) return;
  const fs::path dir = ball_scene_dir("povray_broken_worker");
  const std::string scene = (dir / "ball.pov").string();
  const std::string single = (dir / "single.png").string(), render = (dir / "render.png").string();
  const std::vector<std::string> size = {"--width", "64", "--height", "32", "--renderer-options", "+BS8"};
  std::vector<std::string> single_cmd = {k_farm, "single", scene, "-o", single};
  single_cmd.insert(single_cmd.end(), size.begin(), size.end());
  REQUIRE(test_process::run(single_cmd, (dir / "single.log").string(), 120) == 0);
  // One of the two workers fails each block in milliseconds: without benching it would use up a
  // block's 5 tries while the other worker renders, and end the job.
  const std::string path = crashing_povray(dir, one_worker(dir)) + ":/usr/bin:/bin";
  std::vector<std::string> cmd = {"/usr/bin/env", "PATH=" + path, k_farm, "render", "--no-sandbox", scene, "-o", render,
                                  "--workers", "2", "--policy", "fixed", "--block", "8"};
  cmd.insert(cmd.end(), size.begin(), size.end());
  const int rc = test_process::run(cmd, (dir / "render.log").string(), 120);
  const std::string log = launched_workers::read_text((dir / "render.log").string());
  REQUIRE_MESSAGE(rc == 0, log);
  CHECK_MESSAGE(std::regex_search(log, std::regex("worker [12] '[^']+' sits the rest of this job out: its renderer failed "
                                                  "3 blocks in a row, the last with: povray was killed by signal 9")),
                log);
  CHECK(test_process::same_file(single, render));

  // The only worker broken: the job ends once it is benched, saying why, instead of waiting for a
  // worker. (With two, a block could reach 5 failures first: failed blocks are handed out again
  // first; one worker benched at its third failure cannot.)
  const std::string always = crashing_povray(dir, "kill -9 $$\n") + ":/usr/bin:/bin";
  cmd[1] = "PATH=" + always;
  cmd[9] = "1";  // --workers
  fs::remove(render);
  const int rc2 = test_process::run(cmd, (dir / "render2.log").string(), 120);
  const std::string log2 = launched_workers::read_text((dir / "render2.log").string());
  CHECK_MESSAGE(rc2 == 1, log2);
  CHECK_MESSAGE(log2.find("no worker left to render the job: every connected worker sits it out, the last benched "
                          "being worker") != std::string::npos,
                log2);
  CHECK_FALSE(fs::exists(render));
  fs::remove_all(dir);
}

namespace {

// The ball scene at 64x32 in POV-Ray 8x8 blocks behind a relay: `farm single`'s image, a master
// (fixed blocks) and a relay (`relay_args` added), both started; site workers are the test's.
struct RelayedBall {
  fs::path dir;
  std::string scene, single, render;
  std::unique_ptr<test_process::Child> master, relay;

  RelayedBall(const std::string& name, std::vector<std::string> relay_args) : dir(ball_scene_dir(name)) {
    scene = (dir / "ball.pov").string();
    single = (dir / "single.png").string();
    render = (dir / "render.png").string();
    const std::vector<std::string> size = {"--width", "64", "--height", "32", "--renderer-options", "+BS8"};
    std::vector<std::string> single_cmd = {k_farm, "single", scene, "-o", single};
    single_cmd.insert(single_cmd.end(), size.begin(), size.end());
    REQUIRE(test_process::run(single_cmd, (dir / "single.log").string(), 120) == 0);
    std::vector<std::string> master_cmd = {k_farm, "master", scene, "-o", render, "--bind", "tcp://127.0.0.1:*",
                                           "--policy", "fixed", "--block", "8", "--give-up-after", "60"};
    master_cmd.insert(master_cmd.end(), size.begin(), size.end());
    master = std::make_unique<test_process::Child>(master_cmd, (dir / "master.log").string());
    REQUIRE(master->wait_for_log("listening on", 20));
    std::vector<std::string> args = {k_farm, "relay", "--connect", endpoint_from(*master), "--bind", "tcp://127.0.0.1:*",
                                     "--once", "--cache", (dir / "relay_cache").string(), "--give-up-after", "20"};
    args.insert(args.end(), relay_args.begin(), relay_args.end());
    relay = std::make_unique<test_process::Child>(args, (dir / "relay.log").string());
    REQUIRE(relay->wait_for_log("relay listening on", 20));
  }
  ~RelayedBall() { fs::remove_all(dir); }

  // A one-thread worker named `name` with `path` as its PATH (a fake povray first), joining `at`.
  std::unique_ptr<test_process::Child> worker(const std::string& name, const std::string& path, const std::string& at) {
    return std::make_unique<test_process::Child>(
        std::vector<std::string>{"/usr/bin/env", "PATH=" + path, k_farm, "worker", "--no-sandbox", "--connect", at, "--threads", "1",
                                 "--once", "--name", name, "--cache", (dir / name).string(), "--give-up-after", "20"},
        (dir / (name + ".log")).string());
  }
  std::string logs() const { return master->log() + relay->log(); }
};

}  // namespace

TEST_CASE("backend faults: behind a relay, the relay benches its broken site worker, not the master the site") {
  if (skip_without_povray()) return;
  RelayedBall b("povray_broken_site_worker", {"--workers", "2"});
  // Both site workers run the fake povray; the first to render a block fails every one.
  const std::string path = crashing_povray(b.dir, one_worker(b.dir)) + ":/usr/bin:/bin";
  auto w1 = b.worker("w1", path, endpoint_from(*b.relay));
  auto w2 = b.worker("w2", path, endpoint_from(*b.relay));
  REQUIRE_MESSAGE(b.master->wait(120) == 0, b.logs());
  CHECK(test_process::same_file(b.single, b.render));
  CHECK_MESSAGE(std::regex_search(b.relay->log(), std::regex("site worker [12] 'w[12]' sits the rest of this job out: its "
                                                             "renderer failed 3 blocks in a row")),
                b.relay->log());
  CHECK_MESSAGE(b.master->log().find("sits the rest of this job out") == std::string::npos, b.master->log());
  CHECK(b.master->log().find("now has 1 thread(s) and 1 site worker(s)") != std::string::npos);
  CHECK(b.relay->wait(30) == 0);
}

TEST_CASE("backend faults: behind a relay, a site worker whose renderer hangs has its block copied inside the site") {
  if (skip_without_povray()) return;
  RelayedBall b("povray_hung_site_worker", {"--workers", "2"});
  // The first block rendered anywhere stops its povray (SIGSTOP: neither renders nor dies) while
  // its worker's heartbeats go on. The master sees one participant and never copies a block to
  // it; only the relay's own copy can finish the job.
  const std::string hang = "mkdir '" + (b.dir / "hung").string() + "' 2>/dev/null && kill -STOP $$\n";
  const std::string path = crashing_povray(b.dir, hang) + ":/usr/bin:/bin";
  auto w1 = b.worker("w1", path, endpoint_from(*b.relay));
  auto w2 = b.worker("w2", path, endpoint_from(*b.relay));
  REQUIRE_MESSAGE(b.master->wait(120) == 0, b.logs());
  CHECK(test_process::same_file(b.single, b.render));
  CHECK_MESSAGE(b.relay->log().find("renders a copy of a block held for") != std::string::npos, b.relay->log());
  CHECK(b.relay->wait(30) == 0);
  // The hung one was told to cancel: its worker stops the povray it waited on and ends.
  CHECK(w1->wait(30) == 0);
  CHECK(w2->wait(30) == 0);
  const std::string logs = w1->log() + w2->log();
  CHECK_MESSAGE(std::regex_search(logs, std::regex("block 8x8 at [0-9]+,[0-9]+ of frame 1 stopped: povray was killed")),
                logs);
}

TEST_CASE("backend faults: a relay whose every site worker is benched gives its blocks back and sits the job out") {
  if (skip_without_povray()) return;
  RelayedBall b("povray_broken_site", {});
  // The site's only worker has a povray that fails every block; a healthy worker joins the master
  // directly once the site holds blocks. Before, the relay kept them with nobody to render them.
  auto broken = b.worker("broken", crashing_povray(b.dir, "kill -9 $$\n") + ":/usr/bin:/bin", endpoint_from(*b.relay));
  REQUIRE(b.relay->wait_for_log("sits the rest of this job out", 60));
  auto healthy = b.worker("healthy", "/usr/bin:/bin", endpoint_from(*b.master));
  REQUIRE_MESSAGE(b.master->wait(120) == 0, b.logs());
  CHECK(test_process::same_file(b.single, b.render));
  CHECK_MESSAGE(b.relay->log().find("no site worker can render") != std::string::npos, b.relay->log());
  CHECK_MESSAGE(b.master->log().find("sits this job out: every worker of relay") != std::string::npos, b.master->log());
}

TEST_CASE("backend faults: a Blender that crashes loading a .blend is said to have crashed, its last error as context") {
  if (!have_program("blender")) {
    MESSAGE("skipped: needs Debian's blender");
    return;
  }
  // A damaged .blend made Debian's Blender print an Error line about one datablock and then die of
  // SIGSEGV; the farm reported the Error line alone, as if Blender had refused the file. A fake
  // `blender` does the same on every run (Debian's answers --version), so the farm runs it
  // unconfined (--no-sandbox) as the fake povray above.
  const fs::path dir = test_paths::temp_dir("blender_crash");
  const std::string scene = backend_scenes::make_blender_scene(dir, 16, 16, 1);
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "blender") << "#!/bin/sh\n"
                                 << "case \"$1\" in --version) exec /usr/bin/blender \"$@\" ;; esac\n"
                                 << "echo 'Error reading Screen Animation... removing it.'\n"
                                 << "echo 'Writing: /tmp/blender.crash.txt'\n"
                                 << "kill -SEGV $$\n";
  fs::permissions(bin / "blender", fs::perms::owner_all);
  const std::string path = "PATH=" + bin.string() + ":/usr/bin:/bin";
  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    const std::string log = (dir / (std::string(command) + ".log")).string();
    const int rc = test_process::run({"/usr/bin/env", path, k_farm, command, "--no-sandbox", scene, "-o",
                                      (dir / "out.png").string(), "--frame", "1"},
                                     log, 120);
    const std::string said = launched_workers::read_text(log);
    CHECK_MESSAGE(rc == 2, said);
    CHECK_MESSAGE(said.find("was killed by signal 11") != std::string::npos, said);
    CHECK_MESSAGE(said.find("its last words before: Error reading Screen Animation... removing it.") != std::string::npos, said);
    CHECK_MESSAGE(said.find("blender.crash.txt") == std::string::npos, said);
    CHECK(!fs::exists(dir / "out.png"));
  }
  fs::remove_all(dir);
}

TEST_SUITE_END();
