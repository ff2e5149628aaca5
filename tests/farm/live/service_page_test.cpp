// The service's web page (docs/service.md, Web page) in headless Chromium, driven as a user
// drives it: the mouse clicks pause, resume, set priority and cancel (tests/farm/live/
// page_clicker.py, over the DevTools protocol), and the queue, as `farm job` reads it, follows;
// the page lists the workers and the job each serves; the paused-and-resumed job's image is
// byte-identical to single's; its thumbnail shows, and its name leads to its own live view. Also
// what the page's API refuses without the control header.
#include <doctest/doctest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <filesystem>
#include <regex>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"
#include "farm/process.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;
using nlohmann::json;
using test_process::Child;

namespace {

std::string run_text(const Fixture& f, std::vector<std::string> args, const std::string& log, int* code = nullptr) {
  const int rc = test_process::run(args, f.path(log), 120);
  if (code) *code = rc;
  return launched_workers::read_text(f.path(log));
}

json job_json(const Fixture& f, const std::string& ep, int id) {
  int rc = 0;
  const std::string out = run_text(f, {k_farm, "job", std::to_string(id), "--server", ep, "--json"}, "job.log", &rc);
  REQUIRE_MESSAGE(rc == 0, out);
  return json::parse(out);
}

}  // namespace

TEST_CASE("service page: in headless Chromium, clicks pause, resume, reprioritise and cancel jobs") {
  const char* chromium = "/usr/bin/chromium";
  if (::access(chromium, X_OK) != 0 || ::access("/usr/bin/python3", X_OK) != 0) {
    MESSAGE("skipped: needs /usr/bin/chromium and /usr/bin/python3 (tools/setup.sh installs them)");
    return;
  }
  Fixture f("service_page", 3000);
  Child service({k_farm, "serve", "--state", f.path("state"), "--bind", "tcp://127.0.0.1:*", "--http", "127.0.0.1:0",
                 "--heartbeat", "0.2", "--liveness", "5"},
                f.path("service.log"));
  REQUIRE(service.wait_for_log("service page: http://", 20));
  std::smatch m;
  const std::string log = service.log();
  REQUIRE(std::regex_search(log, m, std::regex("service page: (http://127\\.0\\.0\\.1:[0-9]+/)")));
  const std::string url = m[1];
  const std::string ep = endpoint_from(service);
  Child worker({k_farm, "worker", "--connect", ep, "--threads", "1", "--name", "w1", "--cache", f.cache()}, f.path("w1.log"));
  int rc = 0;
  std::string said = run_text(
      f, {k_farm, "submit", f.scene, "-o", "job.png", "--server", ep, "--block", "8", "--policy", "fixed"}, "submit1.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(said + service.log()));  // failed once under ASan with exit code 2, saying nothing
  said = run_text(f, {k_farm, "submit", f.scene, "-o", "other.png", "--server", ep, "--paused"}, "submit2.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(said + service.log()));

  auto row = [](int id, const std::string& rest) { return "tr.job[data-id=\"" + std::to_string(id) + "\"]" + rest; };
  auto last_is = [](const std::string& what) { return "wait:document.getElementById('message').dataset.last === '" + what + "'"; };
  const std::string clicker = std::string(FARM_SOURCE_DIR) + "/tests/farm/live/page_clicker.py";
  const std::string out = run_text(
      f,
      {"/usr/bin/python3", clicker, chromium, url,
       "wait:document.body.dataset.ready === '1'",
       // The worker serves job 1, and the page says so.
       "wait:document.querySelector('" + row(1, "[data-state=\"running\"]") + "')",
       "wait:[...document.querySelectorAll('tr.worker')].some(r => r.innerText.includes('w1') && r.innerText.includes('job 1'))",
       "click:" + row(1, " button[data-act=\"pause\"]"), last_is("pause 1 ok"),
       "wait:document.querySelector('" + row(1, "[data-state=\"paused\"]") + "')",
       "print:'paused'"},
      "clicker1.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(out + service.log()));
  json j = job_json(f, ep, 1);
  CHECK(j["state"] == "paused");
  CHECK(j["workers"] == 0);
  CHECK(j["history"].back()["who"] == "page");
  const std::string out2 = run_text(
      f,
      {"/usr/bin/python3", clicker, chromium, url, "wait:document.body.dataset.ready === '1'",
       "type:7@" + row(2, " input.prio"), "click:" + row(2, " button[data-act=\"priority\"]"), last_is("priority 2 ok"),
       "click:" + row(2, " button[data-act=\"cancel\"]"), last_is("cancel 2 ok"),
       "wait:document.querySelector('" + row(2, "[data-state=\"cancelled\"]") + "')",
       "click:" + row(1, " button[data-act=\"resume\"]"), last_is("resume 1 ok")},
      "clicker2.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(out2 + service.log()));
  json other = job_json(f, ep, 2);
  CHECK(other["state"] == "cancelled");
  CHECK(other["priority"] == 7);
  const std::string waited =
      run_text(f, {k_farm, "wait", "1", "--server", ep, "-o", f.path("fetched.png")}, "wait.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(waited + service.log()));
  CHECK(test_process::same_file(f.path("fetched.png"), f.reference));
  // The done job's thumbnail (its final image, scaled down) is in its row; a click on its name
  // opens its own live view, which shows it complete with every block, and its image.
  const std::string out3 = run_text(
      f,
      {"/usr/bin/python3", clicker, chromium, url, "wait:document.body.dataset.ready === '1'",
       "wait:document.querySelector('" + row(1, "[data-state=\"done\"]") + "')",
       "wait:(() => { const i = document.querySelector('" + row(1, " td.thumb img") +
           "'); return i && i.complete && i.naturalWidth > 0; })()",
       "print:document.querySelector('" + row(1, " td.thumb img") + "').naturalWidth",
       "click:" + row(1, " a.live"), "wait:location.pathname === '/jobs/1/'",
       "wait:document.body.dataset.finished === '1'",
       "wait:(() => { const i = document.getElementById('image'); return i.complete && i.naturalWidth > 0; })()",
       "print:document.getElementById('summary').innerText", "print:document.getElementById('image').naturalWidth"},
      "clicker3.log", &rc);
  REQUIRE_MESSAGE(rc == 0, std::string(out3 + service.log()));
  CHECK(out3.find("complete in") != std::string::npos);
  const json status = json::parse(run_text(f, {"/usr/bin/curl", "-s", url + "jobs/1/api/status"}, "status.log"));
  CHECK(status["finished"] == true);
  CHECK(status["pixels_done"] == status["pixels_total"]);
  CHECK(status["scene"] == std::filesystem::path(f.scene).filename().string());
  // The thumbnail: the image at most 160 pixels on its longer side, never larger than the image.
  const int width = status["width"], height = status["height"];
  const int side = std::max(width, height);
  const int thumb_width = side > 160 ? width * 160 / side : width;
  CHECK(out3.find("\n" + std::to_string(thumb_width) + "\n") != std::string::npos);
  CHECK(out3.find("\n" + std::to_string(width) + "\n") != std::string::npos);
  // A job the page shows no view of: 404, saying so.
  CHECK(run_text(f, {"/usr/bin/curl", "-s", url + "jobs/99/thumb.png"}, "absent.log").find("no live view") != std::string::npos);
  // The API: JSON, metrics, and a control without the page's header refused.
  const std::string api = run_text(f, {"/usr/bin/curl", "-s", url + "api/jobs"}, "api.log");
  CHECK(json::parse(api)["jobs"].size() == 2);
  // Published twice a second: the job's end shows within a turn or two.
  std::string metrics;
  for (int i = 0; i < 50 && metrics.find("farm_service_jobs{state=\"done\"} 1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    metrics = run_text(f, {"/usr/bin/curl", "-s", url + "metrics"}, "metrics.log");
  }
  CHECK(metrics.find("farm_service_jobs{state=\"done\"} 1") != std::string::npos);
  CHECK(metrics.find("farm_service_jobs{state=\"cancelled\"} 1") != std::string::npos);
  const std::string refused =
      run_text(f, {"/usr/bin/curl", "-s", "-X", "POST", "-d", "", url + "api/jobs/1/pause"}, "refused.log");
  CHECK(refused.find("X-Farm-Control") != std::string::npos);
}

TEST_SUITE_END();
