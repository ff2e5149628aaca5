#include "queue/job_store.h"

#include <chrono>

#include <sqlite3.h>

#include <cstring>
#include <stdexcept>

namespace farm {

namespace {

constexpr int k_schema_version = 1;

const char* const k_schema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  owner TEXT NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('queued', 'running', 'paused', 'done', 'failed', 'cancelled')),
  priority INTEGER NOT NULL,
  spec TEXT NOT NULL,
  submitted REAL NOT NULL,
  started REAL NOT NULL DEFAULT 0,
  finished REAL NOT NULL DEFAULT 0,
  progress REAL NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs(state);
CREATE TABLE IF NOT EXISTS events(
  job INTEGER NOT NULL REFERENCES jobs(id),
  at REAL NOT NULL,
  what TEXT NOT NULL,
  who TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_job ON events(job);
)sql";

// A prepared statement, finalised on every way out.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql, const std::string& path) : m_db(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr) != SQLITE_OK) {
      throw std::runtime_error("the job database '" + path + "': " + sqlite3_errmsg(db));
    }
    m_path = path;
  }
  ~Statement() { sqlite3_finalize(m_stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v) {
    sqlite3_bind_int64(m_stmt, i, v);
    return *this;
  }
  Statement& bind(int i, double v) {
    sqlite3_bind_double(m_stmt, i, v);
    return *this;
  }
  Statement& bind(int i, const std::string& v) {
    sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // True while a row is there.
  bool step() {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw std::runtime_error("the job database '" + m_path + "': " + sqlite3_errmsg(m_db));
  }
  int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
  double real(int column) const { return sqlite3_column_double(m_stmt, column); }
  std::string text(int column) const {
    const unsigned char* t = sqlite3_column_text(m_stmt, column);
    return t ? std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(m_stmt, column)))
             : std::string();
  }

 private:
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_path;
};

const char* const k_job_columns = "id, name, owner, state, priority, spec, submitted, started, finished, progress, reason";

JobRecord record_of(const Statement& s) {
  JobRecord r;
  r.id = s.integer(0);
  r.name = s.text(1);
  r.owner = s.text(2);
  r.state = job_state_from(s.text(3)).value_or(JobState::failed);  // the CHECK keeps others out
  r.priority = static_cast<int>(s.integer(4));
  r.spec = s.text(5);
  r.submitted = s.real(6);
  r.started = s.real(7);
  r.finished = s.real(8);
  r.progress = s.real(9);
  r.reason = s.text(10);
  return r;
}

bool allowed(JobState from, JobState to) {
  switch (to) {
    case JobState::running: return from == JobState::queued;
    case JobState::done:
    case JobState::failed: return from == JobState::running;
    case JobState::paused: return from == JobState::queued || from == JobState::running;
    case JobState::queued: return from == JobState::paused;
    case JobState::cancelled: return !job_state_final(from);
  }
  return false;
}

// Adds the time its scope takes to a total (the service reports the database's share of its time).
struct Timed {
  explicit Timed(double& sum) : total(sum), start(std::chrono::steady_clock::now()) {}
  ~Timed() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  double& total;
  std::chrono::steady_clock::time_point start;
};

}  // namespace

const char* job_state_name(JobState state) {
  switch (state) {
    case JobState::queued: return "queued";
    case JobState::running: return "running";
    case JobState::paused: return "paused";
    case JobState::done: return "done";
    case JobState::failed: return "failed";
    case JobState::cancelled: return "cancelled";
  }
  return "?";
}

std::optional<JobState> job_state_from(const std::string& name) {
  for (JobState s : {JobState::queued, JobState::running, JobState::paused, JobState::done, JobState::failed,
                     JobState::cancelled})
    if (name == job_state_name(s)) return s;
  return std::nullopt;
}

bool job_state_final(JobState state) {
  return state == JobState::done || state == JobState::failed || state == JobState::cancelled;
}

JobStore::JobStore(const std::string& path) : m_path(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close(m_db);
    m_db = nullptr;
    throw std::runtime_error("cannot open the job database '" + path + "': " + why);
  }
  try {
    // Another service on the same state folder waits a little, then is told.
    sqlite3_busy_timeout(m_db, 2000);
    exec("PRAGMA journal_mode=WAL");
    // FULL: a commit is on disk when it returns (an acknowledged submission survives power loss
    // too, not only kill -9); the database sees a few writes per job, never one per block.
    exec("PRAGMA synchronous=FULL");
    exec("PRAGMA foreign_keys=ON");
    exec(k_schema);
    Statement get(m_db, "SELECT value FROM meta WHERE key = 'schema'", m_path);
    if (get.step()) {
      const std::string version = get.text(0);
      if (version != std::to_string(k_schema_version)) {
        throw std::runtime_error("the job database '" + path + "' has schema version " + version + "; this farm reads " +
                                 std::to_string(k_schema_version) + ": use the farm that wrote it, or another state folder");
      }
    } else {
      Statement put(m_db, "INSERT INTO meta(key, value) VALUES('schema', ?1)", m_path);
      put.bind(1, std::to_string(k_schema_version)).step();
    }
  } catch (...) {
    sqlite3_close(m_db);
    m_db = nullptr;
    throw;
  }
}

JobStore::~JobStore() { sqlite3_close(m_db); }

void JobStore::exec(const char* sql) const {
  char* error = nullptr;
  if (sqlite3_exec(m_db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : sqlite3_errmsg(m_db);
    sqlite3_free(error);
    throw std::runtime_error("the job database '" + m_path + "': " + why);
  }
}

void JobStore::event(int64_t id, double now, const std::string& what, const std::string& who) {
  Statement s(m_db, "INSERT INTO events(job, at, what, who) VALUES(?1, ?2, ?3, ?4)", m_path);
  s.bind(1, id).bind(2, now).bind(3, what).bind(4, who).step();
}

int64_t JobStore::submit(const std::string& name, const std::string& owner, int priority, const std::string& spec,
                         bool paused, double now) {
  const Timed timed(m_seconds);
  exec("BEGIN IMMEDIATE");
  try {
    Statement s(m_db, "INSERT INTO jobs(name, owner, state, priority, spec, submitted) VALUES(?1, ?2, ?3, ?4, ?5, ?6)", m_path);
    s.bind(1, name).bind(2, owner).bind(3, std::string(job_state_name(paused ? JobState::paused : JobState::queued)));
    s.bind(4, static_cast<int64_t>(priority)).bind(5, spec).bind(6, now).step();
    const int64_t id = sqlite3_last_insert_rowid(m_db);
    event(id, now, paused ? "submitted paused" : "submitted", owner);
    exec("COMMIT");
    return id;
  } catch (...) {
    sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

Status JobStore::set_state(int64_t id, JobState to, double now, const std::string& who, const std::string& reason) {
  const Timed timed(m_seconds);
  exec("BEGIN IMMEDIATE");
  try {
    std::optional<JobRecord> r = job(id);
    if (!r) {
      exec("ROLLBACK");
      return Status::error("no job " + std::to_string(id));
    }
    if (!allowed(r->state, to)) {
      exec("ROLLBACK");
      return Status::error("job " + std::to_string(id) + " is " + job_state_name(r->state) + ": it cannot be made " +
                           job_state_name(to));
    }
    Statement s(m_db,
                "UPDATE jobs SET state = ?2, reason = ?3, "
                "started = CASE WHEN ?2 = 'running' AND started = 0 THEN ?4 ELSE started END, "
                "finished = CASE WHEN ?2 IN ('done', 'failed', 'cancelled') THEN ?4 ELSE finished END, "
                "progress = CASE WHEN ?2 = 'done' THEN 1 ELSE progress END WHERE id = ?1",
                m_path);
    s.bind(1, id).bind(2, std::string(job_state_name(to))).bind(3, reason).bind(4, now).step();
    event(id, now, reason.empty() ? job_state_name(to) : std::string(job_state_name(to)) + ": " + reason, who);
    exec("COMMIT");
    return {};
  } catch (...) {
    sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

Status JobStore::set_priority(int64_t id, int priority, double now, const std::string& who) {
  const Timed timed(m_seconds);
  exec("BEGIN IMMEDIATE");
  try {
    std::optional<JobRecord> r = job(id);
    if (!r || job_state_final(r->state)) {
      exec("ROLLBACK");
      return Status::error(r ? "job " + std::to_string(id) + " is " + job_state_name(r->state) + ": its priority no longer matters"
                             : "no job " + std::to_string(id));
    }
    Statement s(m_db, "UPDATE jobs SET priority = ?2 WHERE id = ?1", m_path);
    s.bind(1, id).bind(2, static_cast<int64_t>(priority)).step();
    event(id, now, "priority " + std::to_string(priority), who);
    exec("COMMIT");
    return {};
  } catch (...) {
    sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void JobStore::set_progress(int64_t id, double fraction) {
  const Timed timed(m_seconds);
  Statement s(m_db, "UPDATE jobs SET progress = ?2 WHERE id = ?1", m_path);
  s.bind(1, id).bind(2, fraction).step();
}

std::optional<JobRecord> JobStore::job(int64_t id) const {
  const Timed timed(m_seconds);
  Statement s(m_db, (std::string("SELECT ") + k_job_columns + " FROM jobs WHERE id = ?1").c_str(), m_path);
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return record_of(s);
}

std::map<JobState, size_t> JobStore::count_by_state() const {
  const Timed timed(m_seconds);
  Statement s(m_db, "SELECT state, COUNT(*) FROM jobs GROUP BY state", m_path);
  std::map<JobState, size_t> out;
  while (s.step())
    if (std::optional<JobState> state = job_state_from(s.text(0))) out[*state] = static_cast<size_t>(s.integer(1));
  return out;
}

std::vector<JobRecord> JobStore::jobs(size_t limit) const {
  const Timed timed(m_seconds);
  std::string sql = std::string("SELECT ") + k_job_columns + " FROM jobs ORDER BY id DESC";
  if (limit > 0) sql += " LIMIT " + std::to_string(limit);
  Statement s(m_db, sql.c_str(), m_path);
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(record_of(s));
  return out;
}

std::vector<JobRecord> JobStore::unfinished() const {
  const Timed timed(m_seconds);
  Statement s(m_db,
              (std::string("SELECT ") + k_job_columns +
               " FROM jobs WHERE state IN ('queued', 'running', 'paused') ORDER BY id")
                  .c_str(),
              m_path);
  std::vector<JobRecord> out;
  while (s.step()) out.push_back(record_of(s));
  return out;
}

std::vector<JobEvent> JobStore::history(int64_t id) const {
  const Timed timed(m_seconds);
  Statement s(m_db, "SELECT at, what, who FROM events WHERE job = ?1 ORDER BY rowid", m_path);
  s.bind(1, id);
  std::vector<JobEvent> out;
  while (s.step()) out.push_back({s.real(0), s.text(1), s.text(2)});
  return out;
}

}  // namespace farm
