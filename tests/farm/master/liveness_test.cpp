// Liveness (issue 6, item 3): a stopped or partitioned worker is declared dead within
// heartbeat interval x (liveness + 1) and its blocks re-issued; a render thread that hangs
// while the worker's heartbeats go on is caught by reassignment; the master stops within 1 s
// of SIGTERM and keeps its journal for --resume. The image stays byte-identical throughout.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  return {std::istreambuf_iterator<char>(f), {}};
}

int count_of(const std::string& text, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

}  // namespace

TEST_CASE("liveness: a hung render thread with live heartbeats is caught, its block is rendered elsewhere") {
  Fixture f("live_hang", 8);
  const std::string out = f.path("farm.png");
  auto master = start_master(f, out, {"--block", "8", "--stats", f.path("stats.json"), "--no-journal"});
  const std::string ep = endpoint_from(*master);
  // The hung worker alone first, so that it surely holds a block when its thread hangs.
  auto hung = start_worker(f, ep, "hung", {"--hang-after", "2"});
  REQUIRE(hung->wait_for_log("scene loaded", 20));
  REQUIRE(master->wait_for_log("outstanding", 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto healthy = start_worker(f, ep, "healthy");
  REQUIRE_MESSAGE(master->wait(60) == 0, master->log());
  CHECK(test_process::same_file(out, f.reference));
  const std::string stats = read_text(f.path("stats.json"));
  std::smatch m;
  REQUIRE(std::regex_search(stats, m, std::regex("\"reassignments\": ([0-9]+)")));
  CHECK(std::stoi(m[1]) >= 1);
  // The hung worker was never declared dead: its heartbeats went on; only its block was stuck.
  CHECK(count_of(stats, std::regex("\"died\": true")) == 0);
  // The cancel freed the hung thread, so the hung worker also ends cleanly.
  CHECK(hung->wait(20) == 0);
  CHECK(healthy->wait(20) == 0);
}

TEST_CASE("liveness: a stopped worker is declared dead within interval x (liveness + 1), then rejoins") {
  Fixture f("live_stop", 1500);  // ~3 s on one thread: time to stop a worker mid-job
  const std::string out = f.path("farm.png");
  const double interval = 0.5;
  const int liveness = 3;
  // No copies: the victim's blocks stay its own until it is declared dead, so the job cannot
  // end before the detection this test times.
  std::vector<std::string> extra = {"--block", "8", "--stats", f.path("stats.json"), "--no-journal", "--heartbeat", "0.5",
                                    "--liveness", "3", "--max-copies", "1"};
  auto master = start_master(f, out, extra);
  const std::string ep = endpoint_from(*master);
  auto victim = start_worker(f, ep, "victim");
  auto other = start_worker(f, ep, "other");
  // Stop the victim once it is rendering (its first result has arrived).
  REQUIRE(master->wait_for_log("'victim' joined", 20));
  std::smatch id;
  const std::string joined = master->log();
  REQUIRE(std::regex_search(joined, id, std::regex("worker ([0-9]+) 'victim' joined")));
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  REQUIRE(master->poll() == -1);
  victim->kill(SIGSTOP);
  const auto stopped = Clock::now();
  REQUIRE_MESSAGE(master->wait_for_log("worker " + id[1].str() + " is silent", 10), master->log());
  const double detected = seconds_since(stopped);
  MESSAGE("declared dead " << detected << " s after SIGSTOP");
  // Its last message may be up to one interval old at the stop; the master polls every 0.1 s.
  CHECK(detected <= interval * (liveness + 1) + 0.1);
  victim->kill(SIGCONT);
  REQUIRE_MESSAGE(master->wait(60) == 0, master->log());
  CHECK(test_process::same_file(out, f.reference));
  const std::string stats = read_text(f.path("stats.json"));
  CHECK(count_of(stats, std::regex("\"died\": true")) == 1);
  // Back from the stop, the victim was told it is unknown and joined again.
  CHECK(count_of(stats, std::regex("\"name\": \"victim\"")) == 2);
}

TEST_CASE("liveness: the master stops within 1 s of SIGTERM and keeps its journal, --resume finishes the job") {
  Fixture f("live_term", 1500);
  const std::string out = f.path("farm.png");
  auto master = start_master(f, out, {"--block", "8"});
  const std::string ep = endpoint_from(*master);
  auto worker = start_worker(f, ep, "w1");
  REQUIRE_MESSAGE(master->wait_for_log("worker 1 'w1' joined", 20), master->log() << worker->log());
  // Stopped once a block is committed (the journal grew): with none there is nothing to resume,
  // and the master rightly removes its journal. A fixed sleep was too short under ASan.
  const std::string journal = out + ".journal";
  auto journal_size = [&] {
    std::error_code ec;
    const auto size = fs::file_size(journal, ec);
    return ec ? uintmax_t{0} : size;
  };
  uintmax_t first = 0;
  for (int i = 0; i < 300 && (first = journal_size()) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < 600 && journal_size() <= first; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE_MESSAGE(journal_size() > first, master->log());
  REQUIRE(master->poll() == -1);
  master->kill(SIGTERM);
  const auto sent = Clock::now();
  const int code = master->wait(5);
  const double took = seconds_since(sent);
  MESSAGE("master exited " << took << " s after SIGTERM");
  CHECK(code == 1);
  CHECK(took <= 1.0);
  CHECK(master->log().find("run the same command with --resume") != std::string::npos);
  REQUIRE(fs::exists(out + ".journal"));
  worker->kill(SIGKILL);
  auto resumed = start_master(f, out, {"--block", "8", "--resume"});
  auto again = start_worker(f, endpoint_from(*resumed), "w2");
  REQUIRE_MESSAGE(resumed->wait(60) == 0, resumed->log() << again->log());
  CHECK(resumed->log().find("resuming job") != std::string::npos);
  CHECK(test_process::same_file(out, f.reference));
  CHECK_FALSE(fs::exists(out + ".journal"));
}

TEST_CASE("liveness: a job of 100000 frames probes its outputs in about a second, and SIGTERM stops it") {
  // The most frames a job may have (a TOML scene's, or a .blend's range). Each frame's output
  // was probed with a 64 KiB file of its own: 6.4 GB written before binding, 15 s under load,
  // during which SIGTERM was not looked at. Now the folder is probed once and each name stat'ed.
  const fs::path dir = test_paths::temp_dir("liveness_many_frames");
  std::ofstream(dir / "many.toml") << "[render]\nwidth = 8\nheight = 8\nspp = 1\nframes = 100000\n"
                                   << "[[material]]\nname = \"m\"\ntype = \"diffuse\"\n"
                                   << "[[object]]\ntype = \"sphere\"\ncenter = [0, 0, -3]\nradius = 1\nmaterial = \"m\"\n";
  const auto t0 = Clock::now();
  Child master({k_farm, "master", (dir / "many.toml").string(), "-o", (dir / "out.png").string(), "--bind",
                "tcp://127.0.0.1:*", "--no-journal"},
               (dir / "master.log").string());
  REQUIRE_MESSAGE(master.wait_for_log("listening on", 30), master.log());
  const double setup = seconds_since(t0);
  MESSAGE("100000 frames: listening after " << setup << " s");
  CHECK(setup < 6);
  master.kill(SIGTERM);
  const auto t1 = Clock::now();
  CHECK(master.wait(10) == 1);
  CHECK(seconds_since(t1) < 2);
  CHECK_MESSAGE(master.log().find("error: interrupted: no image written") != std::string::npos, master.log());
  CHECK_FALSE(fs::exists(dir / "out_00001.png"));
  fs::remove_all(dir);
}

TEST_SUITE_END();
