// The service's job queue (queue/job_store.h): submissions, the states a job may go through and
// the ones refused, priorities, history, a database reopened, one of another schema refused, and
// a submission acknowledged before `kill -9` still there after it.
#include <doctest/doctest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "queue/job_store.h"
#include "test_paths.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;
namespace fs = std::filesystem;

TEST_CASE("job store: a job's life, and the transitions outside it refused with both states") {
  const fs::path dir = test_paths::temp_dir("job_store_life");
  JobStore store((dir / "farm.db").string());
  const int64_t a = store.submit("chess", "alice", 5, "{\"scene\":\"chess2.toml\"}", false, 100);
  const int64_t b = store.submit("bunny", "bob", 1, "{}", true, 101);
  CHECK(a == 1);
  CHECK(b == 2);
  CHECK(store.job(a)->state == JobState::queued);
  CHECK(store.job(b)->state == JobState::paused);
  CHECK(store.job(a)->spec == "{\"scene\":\"chess2.toml\"}");

  CHECK(store.set_state(a, JobState::running, 102, "service").ok());
  CHECK(store.job(a)->started == 102);
  const Status again = store.set_state(a, JobState::running, 103, "service");
  CHECK(again.message() == "job 1 is running: it cannot be made running");
  CHECK(store.set_state(a, JobState::paused, 104, "alice").ok());
  CHECK(store.set_state(a, JobState::queued, 105, "alice").ok());
  CHECK(store.set_state(a, JobState::running, 106, "service").ok());
  CHECK(store.job(a)->started == 102);  // the first start is kept
  CHECK(store.set_state(a, JobState::done, 110, "service").ok());
  const JobRecord done = *store.job(a);
  CHECK(done.finished == 110);
  CHECK(done.progress == 1);
  CHECK(store.set_state(a, JobState::cancelled, 111, "alice").message() == "job 1 is done: it cannot be made cancelled");
  CHECK(store.set_priority(a, 9, 111, "alice").message() == "job 1 is done: its priority no longer matters");
  CHECK(store.set_state(b, JobState::done, 112, "service").message() == "job 2 is paused: it cannot be made done");
  CHECK(store.set_state(b, JobState::cancelled, 113, "bob", "not needed").ok());
  CHECK(store.job(b)->reason == "not needed");
  CHECK(store.set_state(77, JobState::running, 114, "service").message() == "no job 77");
  CHECK_FALSE(store.job(77));

  const std::vector<JobEvent> h = store.history(a);
  REQUIRE(h.size() == 6);
  CHECK(h[0].what == "submitted");
  CHECK(h[0].who == "alice");
  CHECK(h[2].what == "paused");
  CHECK(h[5].what == "done");
  CHECK(store.history(b).back().what == "cancelled: not needed");
  fs::remove_all(dir);
}

TEST_CASE("job store: listings newest first, the unfinished ones for a restart, priorities recorded") {
  const fs::path dir = test_paths::temp_dir("job_store_list");
  const std::string path = (dir / "farm.db").string();
  {
    JobStore store(path);
    for (int i = 0; i < 5; ++i) store.submit("j" + std::to_string(i), "local", i, "{}", false, 10.0 + i);
    REQUIRE(store.set_state(1, JobState::running, 20, "service").ok());
    REQUIRE(store.set_state(1, JobState::failed, 21, "service", "every worker sits it out").ok());
    REQUIRE(store.set_state(2, JobState::running, 22, "service").ok());
    REQUIRE(store.set_priority(3, 42, 23, "local").ok());
    store.set_progress(2, 0.25);
  }
  // Reopened, as after a restart of the service.
  JobStore store(path);
  const std::vector<JobRecord> all = store.jobs();
  REQUIRE(all.size() == 5);
  CHECK(all.front().id == 5);
  CHECK(store.jobs(2).size() == 2);
  std::vector<int64_t> open;
  for (const JobRecord& r : store.unfinished()) open.push_back(r.id);
  CHECK(open == std::vector<int64_t>{2, 3, 4, 5});
  CHECK(store.job(2)->state == JobState::running);
  CHECK(store.job(2)->progress == 0.25);
  CHECK(store.job(3)->priority == 42);
  CHECK(store.job(1)->reason == "every worker sits it out");
  CHECK(store.history(3).back().what == "priority 42");
  fs::remove_all(dir);
}

TEST_CASE("job store: a file that is not a job database, or of another schema, is refused naming it") {
  const fs::path dir = test_paths::temp_dir("job_store_bad");
  const std::string junk = (dir / "junk.db").string();
  std::ofstream(junk) << std::string(4096, 'x');
  CHECK_THROWS_WITH_AS(JobStore{junk}, doctest::Contains("junk.db"), std::runtime_error);
  const std::string other = (dir / "other.db").string();
  { JobStore store(other); }
  // The schema a later farm would have recorded.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(other.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE meta SET value = '9' WHERE key = 'schema'", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  CHECK_THROWS_WITH_AS(JobStore{other}, doctest::Contains("has schema version 9; this farm reads 1"), std::runtime_error);
  CHECK_THROWS_WITH_AS(JobStore{(dir / "no" / "such" / "farm.db").string()}, doctest::Contains("cannot open the job database"),
                       std::runtime_error);
  fs::remove_all(dir);
}

TEST_CASE("job store: a submission acknowledged before kill -9 is there after it") {
  const fs::path dir = test_paths::temp_dir("job_store_kill");
  const std::string path = (dir / "farm.db").string();
  int ack[2];
  REQUIRE(::pipe(ack) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child submits, says so, and is killed mid-way through its next transaction's life.
    ::close(ack[0]);
    JobStore store(path);
    const int64_t id = store.submit("survivor", "local", 3, "{}", false, 1);
    (void)store.set_state(id, JobState::running, 2, "service");
    const char byte = 1;
    if (::write(ack[1], &byte, 1) != 1) ::_exit(3);
    for (;;) store.set_progress(id, 0.5);  // busy in the database when the kill comes
  }
  ::close(ack[1]);
  char byte = 0;
  REQUIRE(::read(ack[0], &byte, 1) == 1);
  ::close(ack[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  JobStore store(path);
  const std::optional<JobRecord> r = store.job(1);
  REQUIRE(r);
  CHECK(r->name == "survivor");
  CHECK(r->state == JobState::running);
  CHECK(store.unfinished().size() == 1);
  fs::remove_all(dir);
}

TEST_SUITE_END();
