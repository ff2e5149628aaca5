// The worker's content-addressed asset cache (assets/asset_cache.h): what it accepts, what it
// refuses and how a job's folder is laid out from it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "assets/asset_cache.h"
#include "assets/content_hash.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("asset cache: verify checks the hash and the announced size, store and has agree") {
  const fs::path dir = test_paths::temp_dir("asset_cache_store");
  AssetCache cache((dir / "cache").string());
  REQUIRE(cache.probe().ok());
  const std::vector<uint8_t> mesh = bytes("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const std::string hash = content_hash(mesh);
  CHECK(AssetCache::verify(hash, mesh.size(), mesh).ok());
  // One byte more than announced, content that does not match, or a name that is not a hash.
  CHECK(AssetCache::verify(hash, mesh.size() + 1, mesh).message().find("the job said") != std::string::npos);
  std::vector<uint8_t> tampered = mesh;
  tampered[0] = 'x';
  CHECK(AssetCache::verify(hash, tampered.size(), tampered).message().find("does not match its hash") !=
        std::string::npos);
  CHECK(AssetCache::verify("../../etc/passwd", mesh.size(), mesh).message().find("not a content hash") !=
        std::string::npos);

  CHECK_FALSE(cache.has(hash));
  REQUIRE(cache.store(hash, mesh).ok());
  CHECK(cache.has(hash));
  CHECK(cache.cached_hashes() == std::vector<std::string>{hash});
  // A second cache on the same folder (another worker process) sees it too.
  CHECK(AssetCache((dir / "cache").string()).has(hash));
  fs::remove_all(dir);
}

TEST_CASE("asset cache: a job's folder holds each asset under its relative name, and refuses what is unsafe") {
  const fs::path dir = test_paths::temp_dir("asset_cache_jobs");
  AssetCache cache((dir / "cache").string());
  REQUIRE(cache.probe().ok());
  const std::vector<uint8_t> scene = bytes("[render]\nwidth = 8\n"), texture = bytes("not really a png");
  const std::string scene_hash = content_hash(scene), texture_hash = content_hash(texture);
  REQUIRE(cache.store(scene_hash, scene).ok());
  REQUIRE(cache.store(texture_hash, texture).ok());
  const std::vector<proto::AssetRef> assets = {{scene_hash, "scene.toml", scene.size()},
                                               {texture_hash, "textures/wood.png", texture.size()}};
  const fs::path a = cache.materialize(7, assets, "1");
  CHECK(read(a / "scene.toml") == "[render]\nwidth = 8\n");
  CHECK(read(a / "textures" / "wood.png") == "not really a png");
  // Each load gets its own folder: two workers sharing the cache never share a job folder.
  const fs::path b = cache.materialize(7, assets, "2");
  CHECK(a != b);
  CHECK(read(b / "scene.toml") == "[render]\nwidth = 8\n");

  for (const char* bad : {"../escape.toml", "/etc/passwd", "a/../../b"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(cache.materialize(8, {{scene_hash, bad, scene.size()}}, "1"),
                         doctest::Contains("unsafe asset name"), std::runtime_error);
  }
  const std::string absent = content_hash(bytes("never stored"));
  CHECK_THROWS_WITH_AS(cache.materialize(9, {{absent, "gone.obj", 12}}, "1"), doctest::Contains("is not in the cache"),
                       std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("asset cache: a folder that cannot be used is reported by probe, naming it and the reason") {
  const fs::path dir = test_paths::temp_dir("asset_cache_probe");
  std::ofstream(dir / "a-file") << "the cache root cannot be a folder below a regular file";
  AssetCache cache((dir / "a-file" / "cache").string());
  const Status s = cache.probe();
  CHECK_FALSE(s.ok());
  CHECK_MESSAGE(s.message().find("cannot use the cache folder '" + (dir / "a-file" / "cache").string() + "'") !=
                    std::string::npos,
                s.message());
  fs::remove_all(dir);
}


TEST_CASE("asset cache: objects are read-only, and one written through a job folder is found changed and removed") {
  const fs::path dir = test_paths::temp_dir("asset_cache_changed");
  AssetCache cache((dir / "cache").string());
  REQUIRE(cache.probe().ok());
  const std::vector<uint8_t> scene = bytes("[render]\nwidth = 8\n");
  const std::string hash = content_hash(scene);
  REQUIRE(cache.store(hash, scene).ok());
  const fs::path object = dir / "cache" / "objects" / hash;
  CHECK((fs::status(object).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read));
  const std::vector<proto::AssetRef> assets = {{hash, "scene.toml", scene.size()}};
  const fs::path job = cache.materialize(1, assets, "1");
  CHECK(cache.check(hash) == AssetCache::Object::intact);

  // A hostile or careless renderer of that job writes its scene file: as root, or after a chmod,
  // the mode does not stop it, and a hard link writes the object itself (same size, same
  // modification time: only the content and the change time tell).
  const auto modified = fs::last_write_time(job / "scene.toml");
  fs::permissions(job / "scene.toml", fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(job / "scene.toml", std::ios::binary | std::ios::in | std::ios::out) << "[render]\nwidth = 9\n";
  fs::last_write_time(job / "scene.toml", modified);
  REQUIRE(read(job / "scene.toml") == "[render]\nwidth = 9\n");

  // This process verified it before; the stamp it kept no longer matches, so it hashes again.
  CHECK(cache.check(hash) == AssetCache::Object::changed);
  CHECK_FALSE(fs::exists(object));  // thrown away, to be fetched again
  CHECK(cache.check(hash) == AssetCache::Object::absent);
  CHECK_FALSE(cache.has(hash));
  CHECK_THROWS_WITH_AS(cache.materialize(2, assets, "1"), doctest::Contains("is not in the cache, or changed"),
                       std::runtime_error);
  // Fetched again: the next job's folder holds the master's bytes; the old folder keeps its own inode.
  REQUIRE(cache.store(hash, scene).ok());
  CHECK(cache.has(hash));
  CHECK(read(fs::path(cache.materialize(3, assets, "1")) / "scene.toml") == "[render]\nwidth = 8\n");

  // Another process (a fresh cache object: nothing verified yet) hashes before it trusts, and an
  // object an older farm stored writable becomes read-only.
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  AssetCache other((dir / "cache").string());
  CHECK(other.check(hash) == AssetCache::Object::intact);
  CHECK((fs::status(object).permissions() & fs::perms::owner_write) == fs::perms::none);
  fs::permissions(object, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(object, std::ios::binary | std::ios::in | std::ios::out) << "X";
  CHECK(AssetCache((dir / "cache").string()).check(hash) == AssetCache::Object::changed);
  CHECK(other.check(hash) == AssetCache::Object::absent);
  fs::remove_all(dir);
}

TEST_SUITE_END();
