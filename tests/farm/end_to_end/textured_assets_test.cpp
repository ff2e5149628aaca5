// Textured glTF and OBJ scenes over the farm: workers that only read what the master ships
// (their own cache, no shared folder) must render exactly `farm single`'s image, so every
// file the scene reads (glTF .bin and images, OBJ MTL and textures) has to travel.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "gltf_fixture.h"
#include "test_paths.h"
#include "farm/farm_fixture.h"
#include "farm/process.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using namespace farm_fixture;

namespace {

// models/quad.gltf (+ .bin, textures under models/tex/) and models/quad.obj (+ .mtl, textures),
// placed by scene.toml under a white sky; returns the folder.
fs::path write_textured_scene(const std::string& name) {
  fs::path dir = test_paths::temp_dir(name);
  fs::path models = dir / "models";
  fs::create_directories(models / "tex");
  gltf_fixture::write_png(models / "tex" / "blocks.png", 4, 4, 4, gltf_fixture::four_colour_blocks());
  gltf_fixture::write_png(models / "tex" / "holes.png", 4, 4, 1,
                          {0, 255, 0, 255, 255, 0, 255, 0, 0, 255, 0, 255, 255, 0, 255, 0});
  gltf_fixture::QuadOptions o;
  o.texture_uri = "tex/blocks.png";
  o.ortho_camera = false;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}, "metallicFactor": 0.3,
    "roughnessFactor": 0.4}, "emissiveTexture": {"index": 0}, "emissiveFactor": [0.2, 0.2, 0.2]}])";
  gltf_fixture::write_quad(models, "quad", o);
  std::ofstream(models / "quad.obj") << "mtllib quad.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
                                        "vt 0 0\nvt 2 0\nvt 2 2\nvt 0 2\nusemtl cut\nf 1/1 2/2 3/3 4/4\n";
  std::ofstream(models / "quad.mtl") << "newmtl cut\nKd 1 1 1\nmap_Kd tex/blocks.png\nmap_d tex/holes.png\n";
  std::ofstream(dir / "scene.toml") << R"([render]
width = 48
height = 32
spp = 2
[camera]
position = [0.5, 1, 6]
look_at = [0, 0, 0]
fov = 40
[environment]
color = [1, 1, 1]
[[light]]
type = "directional"
direction = [-1, -1, -1]
intensity = 2
[[object]]
type = "mesh"
path = "models/quad.gltf"
translate = [-1.1, 0, 0]
[[object]]
type = "mesh"
path = "models/quad.obj"
translate = [1.1, 0, 0.5]
rotate = [0, -20, 0]
)";
  return dir;
}

// A master plus `workers` workers that each fetch into their own cache (cache0, cache1, ...);
// returns the output path.
std::string render_over_farm(const fs::path& dir, const std::string& scene, const std::string& out_name, int workers_n,
                             const std::vector<std::string>& extra = {}) {
  std::string out = (dir / out_name).string();
  std::vector<std::string> args = {k_farm, "master", scene, "-o", out, "--bind", "tcp://127.0.0.1:*", "--block", "8",
                                   "--heartbeat", "0.2", "--liveness", "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  test_process::Child master(args, out + ".master.log");
  REQUIRE(master.wait_for_log("listening on", 20));
  std::smatch m;
  std::string log = master.log();
  REQUIRE(std::regex_search(log, m, std::regex("listening on (tcp://127\\.0\\.0\\.1:[0-9]+)")));
  std::vector<std::unique_ptr<test_process::Child>> workers;
  for (int i = 0; i < workers_n; ++i) {
    std::string name = out_name + ".w" + std::to_string(i);
    workers.push_back(std::make_unique<test_process::Child>(
        std::vector<std::string>{k_farm, "worker", "--connect", m[1].str(), "--threads", "1", "--once", "--name", name,
                                 "--cache", (dir / ("cache" + std::to_string(i))).string(), "--give-up-after", "20"},
        (dir / (name + ".log")).string()));
  }
  CHECK(master.wait(120) == 0);
  for (auto& w : workers) w->wait(20);
  return out;
}

// How many content-addressed files a worker's cache holds (it keeps what it fetched).
size_t cached_objects(const fs::path& cache) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(cache / "objects", ec); it != fs::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

}  // namespace

TEST_CASE("farm: a TOML scene placing a textured glTF and a textured OBJ renders like single with shipped assets") {
  fs::path dir = write_textured_scene("farm_textured");
  std::string scene = (dir / "scene.toml").string(), single = (dir / "single.png").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single}, single + ".log") == 0);
  std::string farm = render_over_farm(dir, scene, "farm.png", 2);
  CHECK(test_process::same_file(farm, single));
  // A worker that rendered fetched all seven files: the scene, quad.gltf, quad.bin,
  // blocks.png, quad.obj, quad.mtl and holes.png. (On a loaded machine the second worker may
  // join after the job is over and fetch nothing.)
  CHECK(std::max(cached_objects(dir / "cache0"), cached_objects(dir / "cache1")) == 7);
  fs::remove_all(dir);
}

TEST_CASE("farm: a glTF file as the scene renders like single with its buffer and texture shipped") {
  fs::path dir = write_textured_scene("farm_gltf_scene");
  std::string scene = (dir / "models" / "quad.gltf").string(), single = (dir / "single.exr").string();
  REQUIRE(test_process::run({k_farm, "single", scene, "-o", single, "--width", "40", "--spp", "2"}, single + ".log") == 0);
  std::string out = render_over_farm(dir, scene, "farm.exr", 1, {"--width", "40", "--spp", "2"});
  CHECK(test_process::same_file(out, single));
  CHECK(cached_objects(dir / "cache0") == 3);  // quad.gltf, quad.bin, blocks.png
  fs::remove_all(dir);
}

TEST_SUITE_END();
