// A glTF buffer URI with '..' in it ('sub/../quad.bin', 'sub' an empty folder): `farm single`
// and `farm render` read the same file and render the same bytes, since what the job's asset
// list names and what the loader reads are both resolved by name (renderer/scene/gltf); a URI
// whose '..' leaves the scene's folder is refused by both alike, exit 2 naming it (issue 38).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gltf_fixture.h"
#include "test_paths.h"
#include "farm/farm_fixture.h"
#include "farm/process.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using namespace farm_fixture;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// An emissive textured quad, its buffer named by `buffer_uri` (the .bin written beside the .gltf).
std::string write_quad_scene(const fs::path& dir, const std::string& buffer_uri) {
  gltf_fixture::write_png(dir / "tex.png", 2, 2, 4, gltf_fixture::four_colours());
  gltf_fixture::QuadOptions o;
  o.material_json = R"([{"pbrMetallicRoughness": {"baseColorFactor": [0, 0, 0, 1]}, "emissiveTexture": {"index": 0},
    "emissiveFactor": [1, 1, 1]}])";
  const std::string gltf = gltf_fixture::write_quad(dir, "quad", o);
  std::string text = read_all(gltf);
  const std::string from = R"("uri": "quad.bin")";
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), R"("uri": ")" + buffer_uri + "\"");
  std::ofstream(gltf) << text;
  return gltf;
}

}  // namespace

TEST_CASE("glTF URI 'sub/../quad.bin' with an empty 'sub': single and render give the same bytes") {
  const fs::path dir = test_paths::temp_dir("gltf_uri_dotdot");
  const std::string gltf = write_quad_scene(dir, "sub/../quad.bin");
  fs::create_directory(dir / "sub");  // empty: never shipped to a worker
  const std::string single = (dir / "single.png").string(), farm = (dir / "farm.png").string();
  const std::vector<std::string> size = {"--width", "24", "--height", "16", "--spp", "2"};
  std::vector<std::string> s = {k_farm, "single", gltf, "-o", single, "--threads", "1"};
  s.insert(s.end(), size.begin(), size.end());
  REQUIRE_MESSAGE(test_process::run(s, (dir / "single.log").string()) == 0, read_all((dir / "single.log").string()));
  std::vector<std::string> r = {k_farm, "render", gltf, "-o", farm, "--workers", "1", "--threads", "1", "--no-journal"};
  r.insert(r.end(), size.begin(), size.end());
  CHECK_MESSAGE(test_process::run(r, (dir / "render.log").string(), 120) == 0, read_all((dir / "render.log").string()));
  CHECK(test_process::same_file(single, farm));
  fs::remove_all(dir);
}

TEST_CASE("glTF URI 'sub/../../quad.bin' leaving the scene's folder: single and render both refuse it, exit 2") {
  const fs::path dir = test_paths::temp_dir("gltf_uri_leaves");
  const fs::path scene_dir = dir / "scene";
  fs::create_directories(scene_dir / "sub");
  const std::string gltf = write_quad_scene(scene_dir, "sub/../../quad.bin");
  fs::copy_file(scene_dir / "quad.bin", dir / "quad.bin");  // there to be read, were it allowed
  for (const char* command : {"single", "render"}) {
    CAPTURE(command);
    const std::string log = (dir / (std::string(command) + ".log")).string();
    std::vector<std::string> args = {k_farm, command, gltf, "-o", (dir / "out.png").string(), "--width", "24", "--no-journal"};
    if (std::string(command) == "single") args.pop_back();
    CHECK(test_process::run(args, log, 60) == 2);
    const std::string text = read_all(log);
    CHECK_MESSAGE(text.find("URI 'sub/../../quad.bin' leads to '" + (dir / "quad.bin").string() + "', outside") !=
                      std::string::npos,
                  text);
    CHECK_FALSE(fs::exists(dir / "out.png"));
  }
  fs::remove_all(dir);
}

TEST_SUITE_END();
