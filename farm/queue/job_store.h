// The service's durable queue (issue 40): every submitted job, its settings, state, priority and
// history, in one SQLite database in the service's state folder. WAL mode, and every change is
// one transaction synced before it returns: a job whose submission was acknowledged survives
// `kill -9` of the service at any moment. Blocks never come here (they go to each job's journal,
// master/journal.h): the database is touched per job event, never per block.
//
// A job's life (transitions outside it are refused, saying so):
//   queued -> running -> done | failed
//   queued | running -> paused -> queued        (pause, resume)
//   queued | running | paused -> cancelled
// A running job found at start-up was cut off by a crash: the service resumes it from its journal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

struct sqlite3;

namespace farm {

enum class JobState { queued, running, paused, done, failed, cancelled };

const char* job_state_name(JobState state);
std::optional<JobState> job_state_from(const std::string& name);
// done, failed and cancelled: nothing more happens to it.
bool job_state_final(JobState state);

struct JobRecord {
  int64_t id = 0;
  std::string name;
  std::string owner;     // who submitted it (a client key's name; "local" on loopback without keys)
  JobState state = JobState::queued;
  int priority = 0;      // higher first
  std::string spec;      // the submission (scene, output, render options) as the service wrote it (JSON)
  double submitted = 0;  // seconds since the epoch
  double started = 0;    // 0: not yet
  double finished = 0;   // 0: not yet
  double progress = 0;   // fraction of its pixels committed, as last recorded (not per block)
  std::string reason;    // failed or cancelled: why
};

struct JobEvent {
  double at = 0;
  std::string what;  // "submitted", "running", "paused", "priority 5", ...
  std::string who;   // the client that asked, or "service"
};

class JobStore {
 public:
  // Opens (creating if needed) the database at `path`. Throws std::runtime_error naming the file
  // and SQLite's reason: not a database, another schema version, a folder that cannot be written.
  explicit JobStore(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // A new job, queued (or paused); returns its id (1, 2, ... never reused).
  int64_t submit(const std::string& name, const std::string& owner, int priority, const std::string& spec, bool paused,
                 double now);
  // A state change; refused (an error naming the job, both states and why) outside the life
  // above. `reason`: for failed and cancelled.
  Status set_state(int64_t id, JobState to, double now, const std::string& who, const std::string& reason = "");
  Status set_priority(int64_t id, int priority, double now, const std::string& who);
  // Not an event: the last fraction recorded, for listings after a restart.
  void set_progress(int64_t id, double fraction);

  std::optional<JobRecord> job(int64_t id) const;
  // Every job, newest first, at most `limit` (0: all).
  std::vector<JobRecord> jobs(size_t limit = 0) const;
  // queued, running and paused jobs: what the service picks up at start.
  std::vector<JobRecord> unfinished() const;
  std::vector<JobEvent> history(int64_t id) const;
  // How many jobs are in each state (states without jobs absent).
  std::map<JobState, size_t> count_by_state() const;

  const std::string& path() const { return m_path; }
  // Seconds spent in this store's calls so far (the database's share of a service's time).
  double seconds() const { return m_seconds; }

 private:
  void exec(const char* sql) const;
  void event(int64_t id, double now, const std::string& what, const std::string& who);

  std::string m_path;
  sqlite3* m_db = nullptr;
  mutable double m_seconds = 0;
};

}  // namespace farm
