#include "live/queue_server.h"

#include <algorithm>
#include <chrono>
#include <regex>

#include "live/gated_server.h"
#include "live/live_view_routes.h"

namespace farm {
namespace {

const char k_queue_page[] =
#include "queue_page.inc"
    ;

constexpr auto k_answer_wait = std::chrono::seconds(5);  // the loop answers within a turn or two

void json_error(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  std::string escaped;
  for (char c : why) {
    if (c == '"' || c == '\\') escaped += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) escaped += c;
  }
  res.set_content("{\"error\": \"" + escaped + "\"}\n", "application/json");
}

}  // namespace

QueueServer::QueueServer(const LiveServerOptions& o)
    : m_o(o), m_published(std::make_shared<Published>()), m_server(std::make_unique<GatedServer>(o.gate)) {
  httplib::Server& s = *m_server;
  s.new_task_queue = [] { return new InlineQueue; };
  s.set_keep_alive_timeout(static_cast<time_t>(o.gate.keep_alive_seconds));
  s.set_keep_alive_max_count(static_cast<size_t>(o.gate.keep_alive_requests));
  s.set_payload_max_length(4096);  // controls carry their arguments in the path and query
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // As the live view: the Host name first (DNS rebinding), then the method, then the token.
    if (!host_header_allowed(req.get_header_value("Host"), m_host_names, m_port)) {
      res.status = 421;
      res.set_content("misdirected request: this page does not answer to that Host name (docs/service.md)\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD" && req.method != "POST") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD, POST");
      res.set_content("GET, HEAD and POST only\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!authorised(req, m_o.token)) {
      res.status = 401;
      res.set_content("a token is required: ?token=... or Authorization: Bearer ...\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method == "POST" && req.get_header_value("X-Farm-Control") != "1") {
      json_error(res, 403, "a control needs the header X-Farm-Control: 1 (the page sends it)");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.set_header("Cache-Control", "no-store");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'");
    res.set_content(k_queue_page, sizeof k_queue_page - 1, "text/html; charset=utf-8");
  });
  s.Get("/api/jobs", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(published()->jobs, "application/json");
  });
  s.Get(R"(/api/jobs/(\d{1,18}))", [this](const httplib::Request& req, httplib::Response& res) {
    const auto p = published();
    auto it = p->job.find(std::stoll(req.matches[1]));
    if (it == p->job.end()) return json_error(res, 404, "no job " + std::string(req.matches[1]) + " among those listed");
    res.set_content(it->second, "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(published()->metrics, "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Post(R"(/api/jobs/(\d{1,18})/(pause|resume|cancel|priority))", [this](const httplib::Request& req, httplib::Response& res) {
    QueueControl c;
    c.job = std::stoll(req.matches[1]);
    c.verb = req.matches[2];
    if (c.verb == "priority") {
      c.value = req.get_param_value("value");
      if (!std::regex_match(c.value, std::regex("-?[0-9]{1,6}")))
        return json_error(res, 400, "priority?value= needs a whole number");
    }
    auto [status, body] = control(std::move(c));
    res.status = status;
    res.set_content(body, "application/json");
  });
  // A job's own live view: its relative links (api/status, image.png) need the slash.
  s.Get(R"(/jobs/(\d{1,18}))", [](const httplib::Request& req, httplib::Response& res) {
    const size_t query = req.target.find('?');
    res.set_redirect(req.path + "/" + (query == std::string::npos ? "" : req.target.substr(query)), 303);
  });
  add_live_view_routes(s, R"(/jobs/(\d{1,18}))",
                       [this](const httplib::Request& req) { return view_of(std::stoll(req.matches[1])); });
  m_port = bind_gated(*m_server, o);
  m_host_names = live_host_names(o);
  m_thread = start_gated(*m_server);
}

QueueServer::~QueueServer() {
  m_server->stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string QueueServer::url() const { return gated_url(m_o, m_port); }

void QueueServer::publish(std::string jobs_json, std::map<int64_t, std::string> job_json, std::string metrics) {
  auto next = std::make_shared<Published>();
  next->jobs = std::move(jobs_json);
  next->job = std::move(job_json);
  next->metrics = std::move(metrics);
  std::lock_guard<std::mutex> lock(m_mutex);
  m_published = std::move(next);
}

std::shared_ptr<const QueueServer::Published> QueueServer::published() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_published;
}

void QueueServer::show(int64_t job, std::shared_ptr<const LiveView> view) {
  if (!view) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  m_views[job] = std::move(view);
  m_ended.erase(std::remove(m_ended.begin(), m_ended.end(), job), m_ended.end());
}

void QueueServer::ended(int64_t job) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_views.count(job)) return;
  m_ended.push_back(job);
  while (m_ended.size() > k_ended_views) {
    m_views.erase(m_ended.front());
    m_ended.erase(m_ended.begin());
  }
}

bool QueueServer::shows(int64_t job) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_views.count(job) > 0;
}

std::shared_ptr<const LiveView> QueueServer::view_of(int64_t job) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_views.find(job);
  return it == m_views.end() ? nullptr : it->second;
}

std::vector<QueueControl> QueueServer::take_controls() {
  std::lock_guard<std::mutex> lock(m_mutex);
  return std::exchange(m_controls, {});
}

void QueueServer::answer(uint64_t ticket, bool ok, std::string body) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_answers[ticket] = {ok, std::move(body)};
  }
  m_answered.notify_all();
}

std::pair<int, std::string> QueueServer::control(QueueControl c) {
  std::unique_lock<std::mutex> lock(m_mutex);
  if (m_controls.size() >= 64) return {503, "{\"error\": \"too many controls waiting for the service\"}\n"};
  const uint64_t ticket = c.ticket = m_next_ticket++;
  m_controls.push_back(std::move(c));
  if (!m_answered.wait_for(lock, k_answer_wait, [&] { return m_answers.count(ticket) > 0; }))
    return {503, "{\"error\": \"the service did not answer in time\"}\n"};
  auto [ok, body] = std::move(m_answers[ticket]);
  m_answers.erase(ticket);
  return {ok ? 200 : 409, body};
}

}  // namespace farm
