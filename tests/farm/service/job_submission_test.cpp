// A submission's JSON (service/job_submission.h): what the client writes the service reads back
// field for field, adaptive sampling's settings included; a field out of range is named.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "service/job_submission.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

JobSubmission sample() {
  JobSubmission s;
  s.name = "chess";
  s.priority = 5;
  s.scene = "chess2.toml";
  s.files = {{std::string(64, 'a'), "chess2.toml", 1234}};
  s.output = "chess2.png";
  s.render.spp = 64;
  s.render.noise_threshold = 0.05f;
  s.render.min_samples = 8;
  s.render.passes = "albedo,normal";
  return s;
}

std::string error_of(const std::string& json) {
  try {
    parse_submission(json);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("submission: adaptive sampling's threshold and first check travel to the service") {
  const JobSubmission back = parse_submission(submission_json(sample()));
  CHECK(back.render.spp == 64);
  REQUIRE(back.render.noise_threshold);
  CHECK(*back.render.noise_threshold == 0.05f);
  CHECK(back.render.min_samples == 8);
  // Absent: the scene's own (no override).
  JobSubmission plain = sample();
  plain.render.noise_threshold.reset();
  plain.render.min_samples.reset();
  const JobSubmission plain_back = parse_submission(submission_json(plain));
  CHECK_FALSE(plain_back.render.noise_threshold);
  CHECK_FALSE(plain_back.render.min_samples);
  // Out of range: refused, naming the field.
  std::string text = submission_json(sample());
  const std::string key = "\"noise_threshold\":0.05";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  CHECK(error_of(text.replace(at, key.size(), "\"noise_threshold\":3")).find("'noise_threshold'") != std::string::npos);
}

TEST_CASE("submission: the passes travel to the service, and an unknown one is refused naming it") {
  const JobSubmission back = parse_submission(submission_json(sample()));
  REQUIRE(back.render.passes);
  CHECK(*back.render.passes == "albedo,normal");
  std::string text = submission_json(sample());
  const std::string key = "\"passes\":\"albedo,normal\"";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  const std::string error = error_of(text.replace(at, key.size(), "\"passes\":\"albedo,shadows\""));
  CHECK_MESSAGE(error.find("'passes'") != std::string::npos, error);
  CHECK_MESSAGE(error.find("unknown pass 'shadows'") != std::string::npos, error);
}

TEST_SUITE_END();
