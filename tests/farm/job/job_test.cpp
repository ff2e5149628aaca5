// What a job is (farm/job): loading a scene with the command line's overrides, the frames and
// output names, the settings that travel to the workers and the identity that tells jobs apart.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "job/job_identity.h"
#include "job/job_settings.h"
#include "job/job_spec.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

std::string chess2() { return std::string(FARM_SOURCE_DIR) + "/scenes/chess2.toml"; }

}  // namespace

TEST_CASE("job: overrides replace the scene's settings, and bad ones are refused naming the option") {
  RenderOptions o;
  o.scene_path = chess2();
  const rt::SceneDesc plain = load_scene_desc(o);
  o.width = 200;
  o.spp = 3;
  o.seed = 99;
  const rt::SceneDesc d = load_scene_desc(o);
  CHECK(d.settings.width == 200);
  CHECK(d.settings.spp == 3);
  CHECK(d.settings.seed == 99);
  CHECK(d.settings.max_depth == plain.settings.max_depth);
  // Only --width given, and the scene's camera gives no aspect ratio (a glTF camera would): the
  // height stays the scene's.
  CHECK(d.settings.height == plain.settings.height);
  o.integrator = "bogus";
  CHECK_THROWS(load_scene_desc(o));
  o.integrator.reset();
  o.frame = 5;  // chess2 has one frame
  CHECK_THROWS_WITH_AS(load_scene_desc(o), doctest::Contains("--frame 5"), std::invalid_argument);
  o.frame.reset();
  o.renderer_options = "+A0.3";  // POV-Ray's switches are not for the farm's own scenes
  CHECK_THROWS_WITH_AS(load_scene_desc(o), doctest::Contains("--renderer-options"), std::invalid_argument);
}

TEST_CASE("job: frames and output names, a single frame keeping its path and an animation numbering it") {
  RenderOptions o;
  o.scene_path = std::string(FARM_SOURCE_DIR) + "/scenes/orbit.toml";
  const rt::SceneDesc d = load_scene_desc(o);
  REQUIRE(d.settings.frames > 1);
  CHECK(frames_to_render(o, d).size() == static_cast<size_t>(d.settings.frames));
  o.frame = 2;
  CHECK(frames_to_render(o, d) == std::vector<int>{2});
  CHECK(output_path_for_frame("out/a.png", 3, true) == "out/a_0003.png");
  CHECK(output_path_for_frame("out/a.png", 3, false) == "out/a.png");
  CHECK_THROWS_AS(check_output_path("image.bogus-format"), std::invalid_argument);
  CHECK_THROWS_AS(check_output_path("/no/such/folder/a.png"), std::invalid_argument);
  CHECK(default_journal_path("out/a.png") != "out/a.png");
}

TEST_CASE("job: the settings that travel round-trip onto a scene, and any change makes another job") {
  RenderOptions o;
  o.scene_path = chess2();
  o.width = 64;
  o.height = 48;
  const rt::SceneDesc d = load_scene_desc(o);
  const proto::JobSettings s = job_settings(d.settings, std::nullopt);
  CHECK(s.width == 64);
  CHECK(s.height == 48);
  CHECK_FALSE(s.renderer);  // the farm's own scene: no other renderer's version

  // A worker's copy of the scene, with its own defaults, renders exactly the master's job.
  RenderOptions bare;
  bare.scene_path = chess2();
  rt::SceneDesc worker = load_scene_desc(bare);
  apply_job_settings(worker, s);
  CHECK(job_settings(worker.settings, std::nullopt) == s);

  const std::vector<ManifestEntry> manifest = {{{"ab", "chess2.toml", 10}, chess2()}};
  const JobIdentity a = make_job_identity(manifest, s, {1}, proto::PixelEncoding::float32);
  CHECK(make_job_identity(manifest, s, {1}, proto::PixelEncoding::float32).id == a.id);  // stable
  proto::JobSettings more = s;
  more.spp += 1;
  CHECK(make_job_identity(manifest, more, {1}, proto::PixelEncoding::float32).id != a.id);
  CHECK(make_job_identity(manifest, s, {1, 2}, proto::PixelEncoding::float32).id != a.id);
  CHECK(make_job_identity(manifest, s, {1}, proto::PixelEncoding::srgb8).id != a.id);
  std::vector<ManifestEntry> edited = manifest;
  edited[0].ref.hash = "cd";  // the scene file's content changed
  CHECK(make_job_identity(edited, s, {1}, proto::PixelEncoding::float32).id != a.id);
  // A scene rendered a whole frame per block is another job than the same scene in blocks (a
  // journal written by a farm that cut it into blocks is not resumed by one that renders it whole).
  const JobIdentity whole = make_job_identity(manifest, s, {1}, proto::PixelEncoding::float32, true);
  CHECK(whole.id != a.id);
  CHECK(whole.text.find("blocks=whole frames\n") != std::string::npos);
  CHECK(a.text.find("blocks=") == std::string::npos);
  // The text names what makes the job, for a journal to say what differs.
  CHECK(a.text.find("width=64") != std::string::npos);
}

TEST_SUITE_END();
