// `farm serve` end to end (docs/service.md): jobs submitted with priorities share two workers
// block by block, each image byte-identical to `farm single`'s; pause, resume and cancel from the
// command line; kill -9 of the service loses no job and no committed block; keys decide who may
// submit and who may control a job. Ephemeral loopback ports; every process is ended by its Child.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/process.h"

TEST_SUITE_BEGIN("integration");

namespace fs = std::filesystem;
using namespace farm_fixture;
using nlohmann::json;
using test_process::Child;

namespace {

std::unique_ptr<Child> start_service(const Fixture& f, const std::string& state, const std::string& bind = "tcp://127.0.0.1:*",
                                     std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {k_farm, "serve", "--state", f.path(state), "--bind", bind, "--heartbeat", "0.2",
                                   "--liveness", "5"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto s = std::make_unique<Child>(args, f.path(state + ".log"));
  REQUIRE(s->wait_for_log("listening on", 20));
  return s;
}

std::unique_ptr<Child> service_worker(const Fixture& f, const std::string& endpoint, const std::string& name,
                                      std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {k_farm, "worker", "--connect", endpoint, "--threads", "1", "--name", name, "--cache",
                                   f.cache(), "--give-up-after", "60"};
  args.insert(args.end(), extra.begin(), extra.end());
  return std::make_unique<Child>(args, f.path(name + ".log"));
}

struct Ran {
  int code = -1;
  std::string out;
};

// A client command; its output (stdout and stderr) returned.
Ran client(const Fixture& f, std::vector<std::string> args, const std::string& log_name) {
  args.insert(args.begin(), k_farm);
  Ran r;
  r.code = test_process::run(args, f.path(log_name), 120);
  std::ifstream in(f.path(log_name));
  r.out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return r;
}

json job_of(const Fixture& f, const std::string& ep, int id) {
  Ran r = client(f, {"job", std::to_string(id), "--server", ep, "--json"}, "job.log");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  return json::parse(r.out);
}

double event_at(const json& job, const std::string& what) {
  for (const json& e : job["history"])
    if (e["what"] == what) return e["at"].get<double>();
  return -1;
}

int submit(const Fixture& f, const std::string& ep, const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"submit", f.scene, "-o", out, "--server", ep, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  Ran r = client(f, args, "submit.log");
  REQUIRE_MESSAGE(r.code == 0, r.out);
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(r.out, m, std::regex("\\{\"id\":([0-9]+)\\}")), r.out);
  return std::stoi(m[1]);
}

bool wait_until(const std::function<bool()>& ok, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE("service: priorities 1, 5, 5 on two workers: the 5s share them and end before the 1 starts, all equal single") {
  Fixture f("service_priorities", 1500);
  auto service = start_service(f, "state");
  const std::string ep = endpoint_from(*service);
  // Queued before any worker comes, so the dispatch sees all three at once.
  const int low = submit(f, ep, "low.png", {"--priority", "1", "--name", "low", "--block", "16", "--policy", "fixed"});
  const int high_a = submit(f, ep, "a.png", {"--priority", "5", "--name", "a", "--block", "16", "--policy", "fixed"});
  const int high_b = submit(f, ep, "b.png", {"--priority", "5", "--name", "b", "--block", "16", "--policy", "fixed"});
  auto w1 = service_worker(f, ep, "w1");
  auto w2 = service_worker(f, ep, "w2");
  for (int id : {high_a, high_b, low}) {
    CAPTURE(id);
    Ran r = client(f, {"wait", std::to_string(id), "--server", ep, "-o", f.path("job" + std::to_string(id) + ".png")},
                   "wait.log");
    REQUIRE_MESSAGE(r.code == 0, std::string(r.out + service->log()));
    CHECK(test_process::same_file(f.path("job" + std::to_string(id) + ".png"), f.reference));
  }
  const json a = job_of(f, ep, high_a), b = job_of(f, ep, high_b), l = job_of(f, ep, low);
  INFO(a.dump(), b.dump(), l.dump(), service->log());
  // The two 5s ran at once (each started before the other ended)...
  CHECK(event_at(a, "running") < event_at(b, "done"));
  CHECK(event_at(b, "running") < event_at(a, "done"));
  // ...and the 1 got its first worker after both had ended.
  CHECK(event_at(l, "running") >= event_at(a, "done"));
  CHECK(event_at(l, "running") >= event_at(b, "done"));
  const std::string log = service->log();
  // One worker each (whichever joined first takes the older).
  CHECK(std::regex_search(log, std::regex("'w[12]' serves job " + std::to_string(high_a) + "\n")));
  CHECK(std::regex_search(log, std::regex("'w[12]' serves job " + std::to_string(high_b) + "\n")));
  // `farm jobs` lists them; a client's table and JSON agree.
  Ran jobs = client(f, {"jobs", "--server", ep, "--json"}, "jobs.log");
  REQUIRE(jobs.code == 0);
  const json listed = json::parse(jobs.out)["jobs"];
  REQUIRE(listed.size() == 3);
  for (const json& j : listed) {
    CHECK(j["state"] == "done");
    CHECK(j["progress"] == 1.0);
  }
}

TEST_CASE("service: pause takes a job's blocks back at once, resume finishes it exactly, cancel ends another") {
  Fixture f("service_control", 4000);
  auto service = start_service(f, "state");
  const std::string ep = endpoint_from(*service);
  auto w1 = service_worker(f, ep, "w1");
  auto w2 = service_worker(f, ep, "w2");
  const int id = submit(f, ep, "job.png", {"--block", "8", "--policy", "fixed"});
  REQUIRE(wait_until([&] { return job_of(f, ep, id)["progress"].get<double>() > 0.1; }, 60));
  Ran paused = client(f, {"pause", std::to_string(id), "--server", ep}, "pause.log");
  REQUIRE_MESSAGE(paused.code == 0, paused.out);
  json j = job_of(f, ep, id);
  CHECK(j["state"] == "paused");
  CHECK(j["workers"] == 0);
  const double at_pause = j["progress"].get<double>();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  j = job_of(f, ep, id);
  CHECK(j["state"] == "paused");
  CHECK(j["progress"].get<double>() <= at_pause + 1e-9);  // nothing committed while paused
  CHECK(at_pause < 1.0);
  // Another job takes the workers meanwhile, and is cancelled.
  const int other = submit(f, ep, "other.png", {"--block", "8", "--policy", "fixed"});
  REQUIRE(wait_until([&] { return job_of(f, ep, other)["workers"].get<int>() > 0; }, 30));
  Ran cancelled = client(f, {"cancel", std::to_string(other), "--server", ep}, "cancel.log");
  REQUIRE_MESSAGE(cancelled.code == 0, cancelled.out);
  CHECK(job_of(f, ep, other)["state"] == "cancelled");
  Ran again = client(f, {"cancel", std::to_string(other), "--server", ep}, "cancel2.log");
  CHECK(again.code == 2);
  CHECK(again.out.find("is cancelled: it cannot be cancelled") != std::string::npos);
  REQUIRE(client(f, {"resume", std::to_string(id), "--server", ep}, "resume.log").code == 0);
  Ran waited = client(f, {"wait", std::to_string(id), "--server", ep, "-o", f.path("fetched.png")}, "wait.log");
  REQUIRE_MESSAGE(waited.code == 0, std::string(waited.out + service->log()));
  CHECK(test_process::same_file(f.path("fetched.png"), f.reference));
  // Its journal went once the job was recorded done (not before: a crash in between resumes from it).
  CHECK(fs::exists(f.path("state") + "/jobs/" + std::to_string(id) + "/images"));
  CHECK_FALSE(fs::exists(f.path("state") + "/jobs/" + std::to_string(id) + "/journal"));
  Ran fetch_cancelled = client(f, {"fetch", std::to_string(other), "--server", ep, "-o", f.path("x.png")}, "fetch.log");
  CHECK(fetch_cancelled.code == 2);
  CHECK(!fs::exists(f.path("x.png")));
  // Bad ids and calls say what is wrong.
  Ran unknown = client(f, {"pause", "99", "--server", ep}, "unknown.log");
  CHECK(unknown.code == 2);
  CHECK(unknown.out.find("no job 99") != std::string::npos);
}

TEST_CASE("service: a job being set up (its preview) holds neither the queue nor the loop, and is dropped when cancelled meanwhile") {
  Fixture f("service_setup", 4000);
  auto service = start_service(f, "state");
  const std::string ep = endpoint_from(*service);
  auto w1 = service_worker(f, ep, "w1");
  const int small = submit(f, ep, "small.png", {"--block", "8", "--policy", "fixed"});
  REQUIRE(wait_until([&] { return job_of(f, ep, small)["progress"].get<double>() > 0; }, 60));
  // A higher priority with a factoring policy's preview of 1000x750 (seconds of rendering): the
  // worker waits for it while it is set up beside the loop.
  Ran big = client(f, {"submit", std::string(FARM_SOURCE_DIR) + "/scenes/chess2.toml", "-o", "big.png", "--width", "4000",
                       "--height", "3000", "--spp", "1", "--policy", "factoring", "--priority", "5", "--name", "big",
                       "--server", ep, "--json"},
                   "big.log");
  REQUIRE_MESSAGE(big.code == 0, big.out);
  REQUIRE(service->wait_for_log("job 2 'big' is being set up", 30));
  // Answered while the preview renders: the loop is not held by it.
  Ran cancelled = client(f, {"cancel", "2", "--server", ep}, "cancel.log");
  const std::string log = service->log();
  REQUIRE_MESSAGE(cancelled.code == 0, cancelled.out);
  CHECK_MESSAGE(log.find("preview for the factoring policy's block costs: 1000x750") == std::string::npos, log);
  CHECK(log.find("job 2 'big' starts") == std::string::npos);
  CHECK(job_of(f, ep, 2)["state"] == "cancelled");
  // The worker comes back to the small job, which ends exactly; the dropped setup ends unheard.
  Ran waited = client(f, {"wait", std::to_string(small), "--server", ep, "-o", f.path("fetched.png")}, "wait.log");
  REQUIRE_MESSAGE(waited.code == 0, std::string(waited.out + service->log()));
  CHECK(test_process::same_file(f.path("fetched.png"), f.reference));
  CHECK(service->log().find("job 2 'big' starts") == std::string::npos);
}

TEST_CASE("service: kill -9 mid-job, restart: the queue is as before and the job completes from its journal") {
  Fixture f("service_restart", 6000);
  auto service = start_service(f, "state");
  const std::string ep = endpoint_from(*service);
  auto w1 = service_worker(f, ep, "w1");
  const int first = submit(f, ep, "first.png", {"--width", "16", "--height", "12", "--spp", "2"});
  REQUIRE(client(f, {"wait", std::to_string(first), "--server", ep}, "wait1.log").code == 0);
  const int id = submit(f, ep, "job.png", {"--block", "8", "--policy", "fixed", "--name", "long"});
  const int queued = submit(f, ep, "queued.png", {"--paused", "--name", "later"});
  REQUIRE(wait_until([&] { return job_of(f, ep, id)["progress"].get<double>() > 0.25; }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // past the journal's fdatasync interval
  service->kill(SIGKILL);
  // The same port: the worker reconnects by itself.
  service = start_service(f, "state", ep);
  // Its journal is read when its first worker comes back (the worker reconnects by itself).
  REQUIRE(service->wait_for_log("already rendered", 30));
  const std::string log = service->log();
  INFO(log);
  CHECK(log.find("job " + std::to_string(id) + " 'long' (running): taken up again from its journal") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("([0-9]+) block\\(s\\), [0-9.]+% of the pixels, already rendered")));
  const int resumed = std::stoi(m[1]);
  CHECK(resumed > 0);
  Ran jobs = client(f, {"jobs", "--server", ep, "--json"}, "jobs.log");
  REQUIRE(jobs.code == 0);
  INFO(jobs.out);
  std::map<int, std::string> states;
  const json listing = json::parse(jobs.out);
  for (const json& j : listing["jobs"]) states[j["id"].get<int>()] = j["state"].get<std::string>();
  CHECK(states[first] == "done");
  CHECK(states[id] == "running");
  CHECK(states[queued] == "paused");
  Ran waited = client(f, {"wait", std::to_string(id), "--server", ep, "-o", f.path("fetched.png")}, "wait.log");
  REQUIRE_MESSAGE(waited.code == 0, std::string(waited.out + service->log()));
  CHECK(test_process::same_file(f.path("fetched.png"), f.reference));
  // No committed block rendered again: those rendered after the restart and those taken from the
  // journal make the grid exactly (61x45 in blocks of 8: 8 x 6).
  const std::string final_log = service->log();
  REQUIRE(std::regex_search(final_log, m,
                            std::regex("job " + std::to_string(id) + " 'long' is done in [0-9.]+ s: ([0-9]+) block\\(s\\) "
                                       "rendered, ([0-9]+) taken from its journal")));
  CHECK(std::stoi(m[2]) == resumed);
  CHECK(std::stoi(m[1]) + std::stoi(m[2]) == 8 * 6);
  Ran fetched_first = client(f, {"fetch", std::to_string(first), "--server", ep, "-o", f.path("first.png")}, "fetch.log");
  CHECK(fetched_first.code == 0);
}

TEST_CASE("service: with keys, a client without an allowed key cannot submit, and a user cannot cancel another's job") {
  Fixture f("service_keys", 2);
  fs::create_directories(f.path("allowed"));
  for (const std::string name : {"service", "allowed/alice", "allowed/bob", "mallory"})
    REQUIRE(client(f, {"keygen", f.path(name)}, "keygen.log").code == 0);
  auto service = start_service(f, "state", "tcp://127.0.0.1:*",
                               {"--key", f.path("service.key"), "--allow", f.path("allowed")});
  const std::string ep = endpoint_from(*service);
  auto as = [&](const std::string& who) {
    return std::vector<std::string>{"--server", ep, "--key", f.path(who + ".key"), "--server-key", f.path("service.pub")};
  };
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  // Mallory's key is not allowed: the handshake is refused, nothing is queued.
  Ran refused = client(f, with({"submit", f.scene, "-o", "m.png", "--timeout", "3"}, as("mallory")), "mallory.log");
  CHECK(refused.code == 1);
  CHECK(refused.out.find("no answer from a farm service") != std::string::npos);
  // Alice submits; Bob may look but not cancel; Alice may.
  Ran submitted = client(f, with({"submit", f.scene, "-o", "a.png", "--paused", "--json"}, as("allowed/alice")), "alice.log");
  REQUIRE_MESSAGE(submitted.code == 0, submitted.out);
  Ran listed = client(f, with({"jobs", "--json"}, as("allowed/bob")), "bob_jobs.log");
  REQUIRE(listed.code == 0);
  const json listing = json::parse(listed.out);
  REQUIRE(listing["jobs"].size() == 1);
  const std::string id = std::to_string(listing["jobs"][0]["id"].get<int>());
  // Owners are shown by the names the allow-list gives their keys (allowed/alice.pub: alice).
  CHECK(listing["jobs"][0]["owner_name"] == "alice");
  Ran table = client(f, with({"jobs"}, as("allowed/bob")), "bob_table.log");
  CHECK(table.out.find(" alice ") != std::string::npos);
  Ran bob = client(f, with({"cancel", id}, as("allowed/bob")), "bob_cancel.log");
  CHECK(bob.code == 2);
  CHECK(bob.out.find("is not yours") != std::string::npos);
  Ran alice = client(f, with({"cancel", id}, as("allowed/alice")), "alice_cancel.log");
  CHECK_MESSAGE(alice.code == 0, alice.out);
  // A master is not a service: a client is told so.
  auto master = start_master(f, f.path("m.png"));
  Ran wrong = client(f, {"jobs", "--server", endpoint_from(*master)}, "wrong.log");
  CHECK(wrong.code == 2);
  CHECK(wrong.out.find("not a farm service") != std::string::npos);
}

TEST_CASE("service: a worker without a job's renderer leaves that job for one it can render, and the job waits for another") {
  if (!fs::exists("/usr/bin/povray")) {
    MESSAGE("skipped: needs Debian's povray");
    return;
  }
  Fixture f("service_renderer_missing", 2);
  std::ofstream(f.path("ball.pov")) << "camera { location <0, 0, -3> look_at 0 }\nlight_source { <2, 4, -3> rgb 1 }\n"
                                       "sphere { 0, 1 pigment { rgb <1, 0.4, 0.1> } }\n";
  REQUIRE(client(f, {"single", f.path("ball.pov"), "-o", f.path("ball_single.png"), "--width", "32", "--height", "24"},
                 "ball_single.log")
              .code == 0);
  auto service = start_service(f, "state");
  const std::string ep = endpoint_from(*service);
  Ran pov = client(f, {"submit", f.path("ball.pov"), "-o", "ball.png", "--width", "32", "--height", "24", "--priority", "5",
                       "--server", ep, "--json"},
                   "submit_pov.log");
  REQUIRE_MESSAGE(pov.code == 0, pov.out);
  const int pov_id = json::parse(pov.out.substr(0, pov.out.find('\n')))["id"].get<int>();
  const int native_id = submit(f, ep, "native.png", {"--priority", "1"});
  // This worker finds no povray: it refuses the POV-Ray job and takes the lower priority.
  std::vector<std::string> args = {"/usr/bin/env", "PATH=/nonexistent", k_farm, "worker", "--connect", ep, "--threads",
                                   "1", "--name", "nopov", "--cache", f.cache(), "--give-up-after", "60"};
  auto nopov = std::make_unique<Child>(args, f.path("nopov.log"));
  Ran native = client(f, {"wait", std::to_string(native_id), "--server", ep, "-o", f.path("native.png")}, "wait_native.log");
  REQUIRE_MESSAGE(native.code == 0, std::string(native.out + service->log()));
  CHECK(test_process::same_file(f.path("native.png"), f.reference));
  json j = job_of(f, ep, pov_id);
  INFO(j.dump(), service->log());
  CHECK(j["state"] == "running");  // it had a worker, for a moment
  CHECK(j["workers"] == 0);
  CHECK(j.value("waiting_for", "").find("worker 'nopov' cannot take part") != std::string::npos);
  // A worker with povray renders it.
  auto full = service_worker(f, ep, "full");
  Ran waited = client(f, {"wait", std::to_string(pov_id), "--server", ep, "-o", f.path("ball.png")}, "wait_pov.log");
  REQUIRE_MESSAGE(waited.code == 0, std::string(waited.out + service->log()));
  CHECK(test_process::same_file(f.path("ball.png"), f.path("ball_single.png")));
}

TEST_SUITE_END();
