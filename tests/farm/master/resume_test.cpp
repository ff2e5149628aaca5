// `farm master --resume`: after kill -9 of the master at any instant, the same command with
// --resume finishes the job, re-rendering at most what was in flight; the image is
// byte-identical to `farm single` and the journal proves every pixel was committed once.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

// `farm render` (master + 2 local workers that die with it) writing `out`, plus `extra`.
std::vector<std::string> render_args(const Fixture& f, const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> a = {k_farm, "render", f.scene, "-o", out, "--workers", "2", "--threads", "1", "--block", "4",
                                "--keep-journal"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

std::string run_and_log(const std::vector<std::string>& args, const std::string& log, int& code) {
  Child c(args, log);
  code = c.wait(120);
  return c.log();
}

uintmax_t size_of(const std::string& path) {
  std::error_code ec;
  uintmax_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

}  // namespace

TEST_CASE("resume: kill -9 of the master at random instants, then --resume: byte-identical, every pixel once") {
  Fixture f("resume_kill", 24);
  const std::string out = f.path("farm.png"), journal = out + ".journal";
  std::mt19937 rng(5);
  int kills = 0;
  for (int round = 0; round < 3; ++round) {
    Child master(render_args(f, out, {"--resume"}), f.path("round" + std::to_string(round) + ".log"));
    // Kill once the journal has grown by a random amount: at an arbitrary instant of the job,
    // usually with blocks in flight and sometimes in the middle of a write.
    const uintmax_t start = size_of(journal);
    const uintmax_t grow = 2000 + rng() % 6000;
    bool exited = false;
    for (int i = 0; i < 30000 && !exited; ++i) {
      if (size_of(journal) >= start + grow) break;
      exited = master.poll() >= 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (exited) break;  // the job finished before the kill: nothing left to resume
    master.kill(SIGKILL);
    ++kills;
  }
  CHECK(kills >= 2);
  int code = -1;
  std::string log = run_and_log(render_args(f, out, {"--resume", "--stats", f.path("stats.json")}), f.path("final.log"), code);
  REQUIRE_MESSAGE(code == 0, log);
  CHECK(log.find("resuming job") != std::string::npos);
  CHECK(test_process::same_file(out, f.reference));
  // The journal: several starts, no pixel committed twice, every pixel committed.
  std::string check = run_and_log({k_farm, "journal", journal, "--complete"}, f.path("journal.log"), code);
  CHECK_MESSAGE(code == 0, check);
  CHECK(check.find("exactly once: yes, every pixel committed") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(check, m, std::regex("master starts: ([0-9]+)")));
  CHECK(std::stoi(m[1]) == kills + 1);
  std::ifstream stats(f.path("stats.json"));
  std::string json((std::istreambuf_iterator<char>(stats)), {});
  REQUIRE(std::regex_search(json, m, std::regex("\"resumed_blocks\": ([0-9]+)")));
  CHECK(std::stoi(m[1]) > 0);
}

TEST_CASE("resume: a journal is never discarded silently, nor resumed by another job") {
  Fixture f("resume_refusals");
  const std::string out = f.path("farm.png"), journal = out + ".journal";
  int code = -1;
  std::string log = run_and_log(render_args(f, out, {}), f.path("first.log"), code);
  REQUIRE_MESSAGE(code == 0, log);
  REQUIRE(fs::exists(journal));
  // Without --resume: refused, the journal kept.
  log = run_and_log(render_args(f, out, {}), f.path("again.log"), code);
  CHECK(code == 2);
  CHECK(log.find("pass --resume to continue that job, or --fresh") != std::string::npos);
  CHECK(fs::exists(journal));
  // Another job (other spp) resuming it: refused, naming what differs.
  log = run_and_log(render_args(f, out, {"--resume", "--spp", "3"}), f.path("other.log"), code);
  CHECK(code == 2);
  CHECK(log.find("belongs to another job") != std::string::npos);
  CHECK(log.find("spp=2") == std::string::npos);  // key by key, not raw lines
  CHECK(log.find("spp: journal 2, this job 3") != std::string::npos);
  // Not a journal at all.
  { std::ofstream(f.path("junk.journal")) << "not a journal"; }
  log = run_and_log(render_args(f, out, {"--resume", "--journal", f.path("junk.journal")}), f.path("junk.log"), code);
  CHECK(code == 2);
  CHECK(log.find("is not a farm journal") != std::string::npos);
  // --resume and --fresh contradict each other.
  log = run_and_log(render_args(f, out, {"--resume", "--fresh"}), f.path("both.log"), code);
  CHECK(code == 2);
  // --fresh starts over; without --keep-journal the journal goes once the image is written.
  std::vector<std::string> args = {k_farm, "render", f.scene, "-o", out, "--workers", "1", "--fresh"};
  log = run_and_log(args, f.path("fresh.log"), code);
  CHECK_MESSAGE(code == 0, log);
  CHECK(test_process::same_file(out, f.reference));
  CHECK_FALSE(fs::exists(journal));
}

TEST_CASE("resume: a second writer of a journal is refused with the first one's pid, and the lock dies with it") {
  Fixture f("resume_lock");
  const std::string out = f.path("farm.png"), journal = out + ".journal";
  // A master without workers holds its journal while it waits for them.
  auto first = start_master(f, out, {"--keep-journal"});
  const pid_t holder = first->pid();
  int code = -1;
  std::string log = run_and_log(render_args(f, out, {"--resume"}), f.path("second.log"), code);
  CHECK(code == 2);
  CHECK_MESSAGE(log.find("error: the journal '" + journal + "' is in use by another farm process (pid " +
                         std::to_string(holder) + ")") != std::string::npos,
                log);
  CHECK(first->poll() == -1);  // the first goes on, its journal untouched
  // Nor through another name: a symlink to the journal finds the same lock.
  const std::string alias = f.path("alias.journal");
  fs::create_symlink(journal, alias);
  log = run_and_log(render_args(f, f.path("other.png"), {"--resume", "--journal", alias}), f.path("alias.log"), code);
  CHECK(code == 2);
  CHECK_MESSAGE(log.find("(pid " + std::to_string(holder) + ")") != std::string::npos, log);
  CHECK(first->poll() == -1);
  // kill -9 leaves the lock file, not the lock: the kernel dropped it with the process.
  first->kill(SIGKILL);
  CHECK(fs::exists(journal + ".lock"));
  log = run_and_log(render_args(f, out, {"--resume"}), f.path("after.log"), code);
  CHECK_MESSAGE(code == 0, log);
  CHECK(test_process::same_file(out, f.reference));
  CHECK_FALSE(fs::exists(journal + ".lock"));  // a run that ends removes it
}

TEST_SUITE_END();
