// What each client call does (service_host.h): submit and upload, the listings, the controls
// (pause, resume, cancel, priority) and fetching a job's images and statistics. Every body is JSON; a call that
// cannot be done throws, saying why (refuse()), and on_call answers {"error": "..."}: it changes nothing.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "assets/content_hash.h"
#include "base/memory.h"
#include "service/service_host.h"

namespace farm::service_detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string error_body(const std::string& why) { return json{{"error", why}}.dump(); }

json parse_body(const std::string& body) {
  if (body.empty()) return json::object();
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw std::invalid_argument("the call's body is not a JSON object");
  return j;
}

[[noreturn]] void refuse(const std::string& why) { throw std::invalid_argument(why); }

// A file of the state folder sent to a client (an image, statistics).
std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::optional<std::vector<uint8_t>> bytes = read_file_bytes(path.string(), size_t{1} << 31);
  if (!bytes) refuse("cannot read '" + path.string() + "'");
  return std::move(*bytes);
}

int64_t job_id_in(const json& j) {
  auto it = j.find("id");
  if (it == j.end() || !it->is_number_integer()) throw std::invalid_argument("the call names no job ('id')");
  return it->get<int64_t>();
}

}  // namespace

std::string owner_of(const std::string& client_key) { return client_key.empty() ? "local" : client_key; }

void ServiceHost::reply(const std::string& identity, uint64_t call, bool ok, const std::string& body,
                        std::vector<uint8_t> data) {
  m_endpoint->send(identity, proto::ServiceReply{call, ok, body, std::move(data)});
}

bool ServiceHost::on_call(const std::string& identity, const std::string& client_key, proto::ServiceCall& call) {
  const std::string caller = owner_of(client_key);
  bool ok = true;
  std::string body;
  std::vector<uint8_t> data;
  try {
    if (call.command == "submit") body = call_submit(caller, call.body);
    else if (call.command == "upload") body = call_upload(call.body, call.data);
    else if (call.command == "jobs") body = call_jobs(call.body);
    else if (call.command == "job") body = call_job(call.body);
    else if (call.command == "pause" || call.command == "resume" || call.command == "cancel" || call.command == "priority")
      body = call_control(call.command, caller, call.body);
    else if (call.command == "fetch") body = call_fetch(call.body, data);
    else if (call.command == "stats") body = call_stats(call.body, data);
    else {
      ok = false;
      body = error_body("unknown call '" + call.command.substr(0, 64) +
                        "' (submit, upload, jobs, job, pause, resume, cancel, priority, fetch, stats)");
      m_endpoint->bad_input(identity, "unknown service call");
    }
  } catch (const std::exception& e) {
    ok = false;
    body = error_body(error_text(e));
  }
  reply(identity, call.call, ok, body, std::move(data));
  return true;
}

std::string ServiceHost::call_upload(const std::string& body, const std::vector<uint8_t>& data) {
  const json j = parse_body(body);
  const std::string hash = j.value("hash", "");
  const uint64_t size = j.value("size", uint64_t{0});
  if (data.size() > m_o.max_upload_bytes)
    refuse("a file of " + std::to_string(data.size()) + " bytes is over the service's limit of " +
           std::to_string(m_o.max_upload_bytes));
  if (Status s = AssetCache::verify(hash, size, data); !s.ok()) refuse("upload refused: " + s.message());
  if (!m_files->has(hash)) {
    if (Status s = m_files->store(hash, data); !s.ok()) refuse("the service cannot store the file: " + s.message());
  }
  return json{{"stored", hash}}.dump();
}

std::string ServiceHost::call_submit(const std::string& owner, const std::string& body) {
  const JobSubmission s = parse_submission(body);
  // The files first: those the service lacks are asked for, and the client submits again.
  json missing = json::array();
  uint64_t total = 0;
  for (const proto::AssetRef& f : s.files) {
    total += f.size;
    if (!m_files->has(f.hash)) missing.push_back(f.hash);
  }
  if (total > m_o.max_upload_bytes)
    refuse("the job's files hold " + std::to_string(total) + " bytes, over the service's limit of " +
           std::to_string(m_o.max_upload_bytes));
  if (!missing.empty()) return json{{"missing", missing}}.dump();
  if (m_active.size() >= m_o.max_unfinished_jobs)
    refuse("the queue is full: " + std::to_string(m_active.size()) + " unfinished jobs (the service's limit)");
  const int64_t id = m_store->submit(s.name, owner, s.priority, submission_json(s), s.paused, wall_now());
  std::optional<JobRecord> record = m_store->job(id);
  if (std::string why = activate(*record, false); !why.empty()) {
    // Written by this service a moment ago, it parses; were it not, the queue says so.
    if (Status st = m_store->set_state(id, JobState::failed, wall_now(), "service", why); !st.ok())
      spdlog::error("{}", st.message());
    refuse("job " + std::to_string(id) + " cannot be rendered: " + why);
  }
  spdlog::info("job {} '{}' submitted by {} (priority {}{})", id, s.name, owner_name(owner), s.priority,
               s.paused ? ", paused" : "");
  return json{{"id", id}}.dump();
}

std::string ServiceHost::owner_name(const std::string& key) const {
  auto named = m_o.key_names.find(key);
  if (named != m_o.key_names.end()) return named->second;
  return key.size() > 10 ? key.substr(0, 8) + ".." : key;
}

JobRecord ServiceHost::record_of(int64_t id) const {
  std::optional<JobRecord> r = m_store->job(id);
  if (!r) refuse("no job " + std::to_string(id));
  return *r;
}

std::string ServiceHost::job_json(const JobRecord& r) const {
  json j;
  j["id"] = r.id;
  j["name"] = r.name;
  j["owner"] = r.owner;
  j["owner_name"] = owner_name(r.owner);
  j["state"] = job_state_name(r.state);
  j["priority"] = r.priority;
  double progress = r.progress;
  int workers = 0;
  auto a = m_active.find(r.id);
  if (a != m_active.end()) {
    progress = progress_of(*a->second);
    workers = a->second->job ? static_cast<int>(a->second->job->members().size()) : 0;
    j["state"] = job_state_name(a->second->record.state);
    j["priority"] = a->second->record.priority;
    // Unfinished: why it has no worker, if a worker could not take part.
    if (workers == 0 && !a->second->waiting_for.empty()) j["waiting_for"] = a->second->waiting_for;
  }
  j["progress"] = progress;
  j["workers"] = workers;
  const double end = r.finished > 0 ? r.finished : wall_now();
  const double elapsed = r.started > 0 ? end - r.started : 0.0;
  j["elapsed"] = elapsed;
  // Predicted from the pace so far (the fraction done per second of its running).
  if (a != m_active.end() && progress > 0 && progress < 1 && elapsed > 0) j["remaining"] = elapsed * (1 - progress) / progress;
  else j["remaining"] = nullptr;
  j["submitted"] = r.submitted;
  j["reason"] = r.reason;
  return j.dump();
}

std::string ServiceHost::call_jobs(const std::string& body) {
  const json j = parse_body(body);
  const size_t limit = j.value("limit", size_t{0});
  std::string out = "{\"jobs\": [";
  bool first = true;
  for (const JobRecord& r : m_store->jobs(limit)) {
    out += (first ? "" : ", ") + job_json(r);
    first = false;
  }
  return out + "]}";
}

std::string ServiceHost::call_job(const std::string& body) {
  const int64_t id = job_id_in(parse_body(body));
  const JobRecord r = record_of(id);
  json j = json::parse(job_json(r));
  json history = json::array();
  for (const JobEvent& e : m_store->history(id)) {
    history.push_back({{"at", e.at}, {"what", e.what}, {"who", e.who}, {"who_name", owner_name(e.who)}});
  }
  j["history"] = history;
  auto a = m_active.find(id);
  if (a != m_active.end()) {
    j["scene"] = a->second->submission.scene;
    j["output"] = a->second->submission.output;
  } else {
    try {
      const JobSubmission s = parse_submission(r.spec);
      j["scene"] = s.scene;
      j["output"] = s.output;
    } catch (const std::exception&) {
      // Written by this service: it parses. Were it not, the listing goes on without the names.
    }
  }
  return j.dump();
}

bool ServiceHost::may_control(const std::string& caller, const JobRecord& r) const {
  return caller == r.owner || caller == k_page_caller || m_o.admins.count(caller) > 0;
}

std::string ServiceHost::call_control(const std::string& command, const std::string& caller, const std::string& body) {
  const json j = parse_body(body);
  const int64_t id = job_id_in(j);
  const JobRecord r = record_of(id);
  if (!may_control(caller, r))
    refuse("job " + std::to_string(id) + " is not yours: only its owner or an admin key may " + command + " it");
  auto a = m_active.find(id);
  if (command == "priority") {
    auto p = j.find("priority");
    if (p == j.end() || !p->is_number_integer() || p->get<int64_t>() < k_min_priority || p->get<int64_t>() > k_max_priority)
      refuse("a priority is a whole number from " + std::to_string(k_min_priority) + " to " + std::to_string(k_max_priority));
    const int priority = p->get<int>();
    if (Status s = m_store->set_priority(id, priority, wall_now(), caller); !s.ok()) refuse(s.message());
    if (a != m_active.end()) {
      a->second->record.priority = priority;
      m_dispatch.set_priority(static_cast<JobKey>(id), priority);
    }
    return json{{"id", id}, {"priority", priority}}.dump();
  }
  const JobState to = command == "pause" ? JobState::paused : command == "resume" ? JobState::queued : JobState::cancelled;
  if (a == m_active.end() || job_state_final(r.state))
    refuse("job " + std::to_string(id) + " is " + job_state_name(r.state) + ": it cannot be " +
           (command == "pause" ? "paused" : command == "resume" ? "resumed" : "cancelled"));
  ActiveJob& job = *a->second;
  if (Status s = m_store->set_state(id, to, wall_now(), caller, to == JobState::cancelled ? "cancelled by " + caller.substr(0, 12) : "");
      !s.ok())
    refuse(s.message());
  job.record.state = to;
  if (to == JobState::paused || to == JobState::cancelled) release_all(job);  // its leases back at once
  if (to == JobState::cancelled) {
    spdlog::info("job {} '{}' cancelled", id, job.record.name);
    retire(id);  // its ServedJob goes, closing its journal: then the journal can go too
    std::error_code ignored;
    fs::remove(job_dir(id) / "journal", ignored);
  } else {
    m_dispatch.set_paused(static_cast<JobKey>(id), to == JobState::paused);
    spdlog::info("job {} '{}' {}", id, job.record.name, to == JobState::paused ? "paused" : "resumed");
  }
  return json{{"id", id}, {"state", job_state_name(to)}}.dump();
}

std::string ServiceHost::call_fetch(const std::string& body, std::vector<uint8_t>& data) {
  const json j = parse_body(body);
  const int64_t id = job_id_in(j);
  const size_t index = j.value("index", size_t{0});
  const JobRecord r = record_of(id);
  if (r.state != JobState::done)
    refuse("job " + std::to_string(id) + " is " + job_state_name(r.state) + ": its images are written when it is done");
  // Its images are the files of its images/ folder (sorted: frame order).
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(job_dir(id) / "images", ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) refuse("job " + std::to_string(id) + " has no image in the service's state folder");
  if (index >= files.size()) refuse("job " + std::to_string(id) + " has " + std::to_string(files.size()) + " image(s)");
  data = read_bytes(files[index]);
  return json{{"name", files[index].filename().string()},
              {"hash", content_hash(data)},
              {"size", data.size()},
              {"count", files.size()}}
      .dump();
}

std::string ServiceHost::call_stats(const std::string& body, std::vector<uint8_t>& data) {
  const int64_t id = job_id_in(parse_body(body));
  const JobRecord r = record_of(id);
  // The run's statistics (the format of `farm master --stats`), written with its images.
  const fs::path path = job_dir(id) / "stats.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    refuse("job " + std::to_string(id) + " is " + job_state_name(r.state) +
           ": it has no statistics (they are written with its images, when it is done)");
  data = read_bytes(path);
  return json{{"hash", content_hash(data)}, {"size", data.size()}}.dump();
}

}  // namespace farm::service_detail
