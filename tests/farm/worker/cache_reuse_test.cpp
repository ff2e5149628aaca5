// A worker's cache across jobs (issue 38): a job folder's files are hard links to the cache's
// objects, so a renderer that writes one (a hostile scene; root ignores the objects' 0444) would
// change what every later job of that worker reads, with exit 0 and a wrong image. The worker
// checks an object against its hash before reusing it, throws a changed one away with a warning
// naming the asset, and fetches it again.
#include <doctest/doctest.h>

#include <regex>

#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

// The scene file of the one job folder under the cache (the worker keeps its folders until it exits).
fs::path job_scene(const Fixture& f) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(f.cache()) / "jobs", ec))
    if (fs::exists(e.path() / "scene.toml")) found.push_back(e.path() / "scene.toml");
  REQUIRE(found.size() == 1);
  return found.front();
}

}  // namespace

TEST_CASE("worker cache: a scene rewritten through a job folder between two jobs is fetched again, the image exact") {
  Fixture f("cache_reuse");
  const std::string out1 = f.path("first.png"), out2 = f.path("second.png");
  auto master1 = start_master(f, out1, {"--no-journal"});
  const std::string endpoint = endpoint_from(*master1);
  REQUIRE(!endpoint.empty());
  // One worker for both jobs: not --once, so it joins the next master on the same port.
  Child worker({k_farm, "worker", "--connect", endpoint, "--threads", "1", "--name", "w", "--cache", f.cache(),
                "--give-up-after", "60"},
               f.path("w.log"));
  REQUIRE_MESSAGE(master1->wait(60) == 0, master1->log());
  REQUIRE(test_process::same_file(f.reference, out1));

  // The hostile scene: its job writes its own scene file, through the link (same size, so only
  // the content and the inode's change time tell). A brighter lamp: a different image.
  const fs::path linked = job_scene(f);
  fs::permissions(linked, fs::perms::owner_write, fs::perm_options::add);  // as a renderer could (root needs not)
  {
    std::fstream file(linked, std::ios::binary | std::ios::in | std::ios::out);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const size_t at = text.find("emission = 6");
    REQUIRE(at != std::string::npos);
    file.seekp(static_cast<std::streamoff>(at));
    file << "emission = 9";
  }

  // The next job, on the port the worker knows.
  Child master2({k_farm, "master", f.scene, "-o", out2, "--bind", endpoint, "--no-journal", "--heartbeat", "0.2",
                 "--liveness", "3"},
                out2 + ".master.log");
  REQUIRE_MESSAGE(master2.wait(60) == 0, master2.log() << worker.log());
  CHECK(test_process::same_file(f.reference, out2));
  CHECK_MESSAGE(std::regex_search(worker.log(), std::regex("warning.*the cached copy of asset 'scene\\.toml' \\([0-9a-f]{64}\\) "
                                                           "no longer matches its hash.*fetched again from the master")),
                worker.log());
  worker.kill(SIGTERM);
  CHECK(worker.wait(30) == 0);
}

TEST_SUITE_END();
