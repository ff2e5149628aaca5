// The service's web page (live/queue_server.h, docs/service.md): what the loop publishes to it
// twice a second (the queue, the workers, the metrics), and the page's controls, run as the
// command line's are (service_calls.cpp) with the page's caller.
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <tuple>

#include "base/memory.h"
#include "service/service_host.h"

namespace farm::service_detail {

using nlohmann::json;

namespace {

constexpr double k_publish_interval = 0.5;
constexpr size_t k_page_jobs = 500;  // the newest; `farm jobs` lists them all

}  // namespace

RunStatus ServiceHost::open_page() {
  if (m_o.http.empty()) return RunStatus::ok;
  try {
    LiveServerOptions lo = parse_http_address(m_o.http);
    lo.token = m_o.http_token;
    if (!is_loopback_address(lo.address) && lo.token.empty())
      throw std::invalid_argument("the page off loopback needs a token: whoever reaches it may control every job");
    m_page = std::make_unique<QueueServer>(lo);
  } catch (const std::invalid_argument& e) {
    spdlog::error("{}", e.what());
    return RunStatus::bad_input;
  } catch (const std::exception& e) {
    spdlog::error("{}", error_text(e));
    return RunStatus::failure;
  }
  spdlog::info("service page: {}", m_page->url());
  return RunStatus::ok;
}

void ServiceHost::serve_page() {
  if (!m_page) return;
  // Answered only once the list shows their effect: the page asks for it as soon as it has an answer.
  std::vector<std::tuple<uint64_t, bool, std::string>> answers;
  for (QueueControl& c : m_page->take_controls()) {
    bool ok = true;
    std::string body;
    try {
      json args{{"id", c.job}};
      if (c.verb == "priority") args["priority"] = std::stoll(c.value);
      body = call_control(c.verb, k_page_caller, args.dump());
    } catch (const std::exception& e) {
      ok = false;
      body = json{{"error", error_text(e)}}.dump();
    }
    answers.emplace_back(c.ticket, ok, std::move(body));
  }
  const double t = now();
  if (answers.empty() && m_last_published >= 0 && t - m_last_published < k_publish_interval) return;
  m_last_published = t;
  std::string jobs = "{\"jobs\": [";
  std::map<int64_t, std::string> each;
  bool first = true;
  for (const JobRecord& r : m_store->jobs(k_page_jobs)) {
    std::string j = job_json(r);
    // Whether the page has the job's own live view (and its thumbnail) at /jobs/ID/.
    j.insert(j.size() - 1, std::string(", \"live\": ") + (m_page->shows(r.id) ? "true" : "false"));
    jobs += (first ? "" : ", ") + j;
    first = false;
    each[r.id] = std::move(j);
  }
  json workers = json::array();
  for (const auto& [identity, peer] : m_endpoint->peers()) {
    auto it = m_job_of.find(peer.id);
    workers.push_back({{"id", peer.id}, {"name", peer.name}, {"threads", peer.threads},
                       {"job", it == m_job_of.end() || it->second == 0 ? json(nullptr) : json(it->second)}});
  }
  jobs += "], \"workers\": " + workers.dump() + "}";
  // Prometheus: the queue by state (every job the database holds), the workers, and each
  // unfinished job's progress.
  std::string metrics = "# HELP farm_service_jobs Jobs in the queue by state.\n# TYPE farm_service_jobs gauge\n";
  std::map<JobState, size_t> states = m_store->count_by_state();
  for (JobState s : {JobState::queued, JobState::running, JobState::paused, JobState::done, JobState::failed,
                     JobState::cancelled})
    metrics += std::string("farm_service_jobs{state=\"") + job_state_name(s) + "\"} " + std::to_string(states[s]) + "\n";
  metrics += "# HELP farm_service_workers Workers connected.\n# TYPE farm_service_workers gauge\n";
  metrics += "farm_service_workers " + std::to_string(m_endpoint->peers().size()) + "\n";
  metrics += "# HELP farm_service_job_progress Fraction of an unfinished job's pixels done.\n"
             "# TYPE farm_service_job_progress gauge\n";
  for (const auto& [id, a] : m_active)
    metrics += "farm_service_job_progress{id=\"" + std::to_string(id) + "\"} " + std::to_string(progress_of(*a)) + "\n";
  m_page->publish(std::move(jobs), std::move(each), std::move(metrics));
  for (auto& [ticket, ok, body] : answers) m_page->answer(ticket, ok, std::move(body));
}

}  // namespace farm::service_detail
