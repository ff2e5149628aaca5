// A worker takes a job's channels only as its renderer carries them: our renderer's are its
// passes' (the alpha before them), and a master that sends others is refused, saying so.
#include <doctest/doctest.h>

#include "job/job_settings.h"
#include "worker/job_loader.h"

TEST_SUITE_BEGIN("unit");

TEST_CASE("worker: our renderer's job carries exactly its passes' channels, or is refused as sent") {
  rt::RenderSettings s;
  s.passes = (1u << static_cast<int>(rt::Pass::depth)) | (1u << static_cast<int>(rt::Pass::albedo));
  farm::proto::JobSettings j = farm::job_settings(s, std::nullopt);
  CHECK(j.channels == rt::layered_channel_names(s.passes));
  CHECK(farm::proto::carried_floats(j) == 1 + 3 + 1);  // the alpha, the albedo, the depth
  CHECK_FALSE(farm::check_job_renderer(j));
  j.channels.pop_back();
  std::optional<farm::JobRefusal> refused = farm::check_job_renderer(j);
  REQUIRE(refused);
  CHECK(refused->message == "the master sent channels that are not those of the job's passes");
  j.channels.clear();
  CHECK(farm::check_job_renderer(j));  // passes without their channels
  j.passes = 0;
  CHECK_FALSE(farm::check_job_renderer(j));  // neither: the colour alone
}
