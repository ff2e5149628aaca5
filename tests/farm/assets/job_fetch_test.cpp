// What a participant fetches of the job it was welcomed to (assets/job_fetch.h): only what its
// cache lacks, each arriving file verified against the Welcome before it is stored.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "assets/asset_cache.h"
#include "assets/content_hash.h"
#include "assets/job_fetch.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

proto::AssetRef ref(const std::string& name, const std::vector<uint8_t>& data) {
  proto::AssetRef r;
  r.name = name;
  r.hash = content_hash(data);
  r.size = data.size();
  return r;
}

}  // namespace

TEST_CASE("job fetch: asks for what the cache lacks, stores what was promised, ignores repeats and strangers") {
  const fs::path dir = test_paths::temp_dir("job_fetch");
  AssetCache cache((dir / "cache").string());
  REQUIRE(cache.probe().ok());
  const std::vector<uint8_t> scene = bytes("[camera]\n"), mesh = bytes("v 0 0 0\n"), other = bytes("not in the job");
  REQUIRE(cache.store(content_hash(scene), scene).ok());

  JobFetch fetch(cache, {ref("scene.toml", scene), ref("mesh.obj", mesh)});
  CHECK(fetch.missing() == std::set<std::string>{content_hash(mesh)});
  CHECK(fetch.request().hashes == std::vector<std::string>{content_hash(mesh)});
  CHECK_FALSE(fetch.complete());
  CHECK(fetch.patience() > 0);

  Status error;
  CHECK(fetch.receive({content_hash(other), other}, error) == JobFetch::Outcome::ignored);
  CHECK_FALSE(cache.has(content_hash(other)));
  // Not the bytes the Welcome promised under that hash: the sender's fault, nothing stored.
  CHECK(fetch.receive({content_hash(mesh), other}, error) == JobFetch::Outcome::bad_asset);
  CHECK(error.message().find(content_hash(mesh).substr(0, 8)) != std::string::npos);
  CHECK_FALSE(cache.has(content_hash(mesh)));
  CHECK_FALSE(fetch.complete());

  CHECK(fetch.receive({content_hash(mesh), mesh}, error) == JobFetch::Outcome::stored);
  CHECK(fetch.complete());
  CHECK(fetch.patience() == 0);
  CHECK(cache.has(content_hash(mesh)));
  CHECK(fetch.receive({content_hash(mesh), mesh}, error) == JobFetch::Outcome::ignored);  // a repeat
  fs::remove_all(dir);
}

TEST_CASE("job fetch: a cached copy that something changed is removed and fetched again") {
  const fs::path dir = test_paths::temp_dir("job_fetch_changed");
  AssetCache cache((dir / "cache").string());
  REQUIRE(cache.probe().ok());
  const std::vector<uint8_t> scene = bytes("[camera]\n");
  const std::string hash = content_hash(scene);
  REQUIRE(cache.store(hash, scene).ok());
  // Written through a job folder's hard link, as a scene that writes its own files did.
  const std::string folder = cache.materialize(1, {ref("scene.toml", scene)}, "test");
  fs::permissions(fs::path(folder) / "scene.toml", fs::perms::owner_write, fs::perm_options::add);
  {
    std::ofstream out(fs::path(folder) / "scene.toml", std::ios::binary | std::ios::app);
    out << "# changed\n";
  }
  JobFetch fetch(cache, {ref("scene.toml", scene)});
  CHECK(fetch.missing() == std::set<std::string>{hash});
  Status error;
  CHECK(fetch.receive({hash, scene}, error) == JobFetch::Outcome::stored);
  CHECK(fetch.complete());
  fs::remove_all(dir);
}
