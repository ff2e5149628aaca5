// What the farm's end-to-end tests share: a small scene and its `farm single` reference in a
// fresh folder, and starting a master or workers on ephemeral loopback ports.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "../test_paths.h"
#include "process.h"

namespace farm_fixture {

namespace fs = std::filesystem;
using test_process::Child;

inline const std::string k_farm = FARM_EXE;

// A copy of tests/farm/data/small_scene.toml in `dir` with `spp` samples per pixel.
inline std::string write_scene(const fs::path& dir, int spp) {
  std::ifstream in(std::string(FARM_SOURCE_DIR) + "/tests/farm/data/small_scene.toml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string line = "\nspp = 2\n";
  const size_t at = text.find(line);
  REQUIRE_MESSAGE(at != std::string::npos, "tests/farm/data/small_scene.toml lost its 'spp = 2' line");
  text.replace(at, line.size(), "\nspp = " + std::to_string(spp) + "\n");
  std::ofstream(dir / "scene.toml") << text;
  return (dir / "scene.toml").string();
}

struct Fixture {
  fs::path dir;
  std::string scene, reference;
  // `ext`: .png (8-bit sRGB on the wire) or .exr (float32 on the wire, where NaN can travel).
  explicit Fixture(const std::string& name, int spp = 2, const std::string& ext = ".png") {
    dir = test_paths::temp_dir(name);
    scene = write_scene(dir, spp);
    reference = (dir / ("single" + ext)).string();
    REQUIRE(test_process::run({k_farm, "single", scene, "-o", reference, "--threads", "1"}, (dir / "single.log").string()) ==
            0);
  }
  ~Fixture() { fs::remove_all(dir); }
  std::string path(const std::string& file) const { return (dir / file).string(); }
  std::string cache() const { return path("cache"); }
};

inline std::string endpoint_from(const Child& master) {
  std::smatch m;
  std::string log = master.log();
  if (std::regex_search(log, m, std::regex("listening on (tcp://127\\.0\\.0\\.1:[0-9]+)"))) return m[1];
  return {};
}

inline std::unique_ptr<Child> start_master(const Fixture& f, const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {k_farm, "master", f.scene, "-o", out, "--bind", "tcp://127.0.0.1:*"};
  // Fast failure detection unless the test sets its own.
  if (std::find(extra.begin(), extra.end(), "--heartbeat") == extra.end()) extra.insert(extra.end(), {"--heartbeat", "0.2"});
  if (std::find(extra.begin(), extra.end(), "--liveness") == extra.end()) extra.insert(extra.end(), {"--liveness", "3"});
  args.insert(args.end(), extra.begin(), extra.end());
  auto master = std::make_unique<Child>(args, out + ".master.log");
  REQUIRE(master->wait_for_log("listening on", 20));
  return master;
}

inline std::unique_ptr<Child> start_worker(const Fixture& f, const std::string& endpoint, const std::string& name,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {k_farm, "worker", "--connect", endpoint, "--threads", "1", "--once",
                                   "--name", name, "--cache", f.cache(), "--give-up-after", "20"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Child>(args, f.path(name + ".log"));
}

}  // namespace farm_fixture
