#include "live/live_server.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "base/file_checks.h"
#include "live/connection_gate.h"
#include "live/gated_server.h"
#include "live/live_view_routes.h"

namespace farm {
namespace {




std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s.size() > 1 && s.back() == '.') s.pop_back();  // "host.example." is "host.example"
  return s;
}

bool is_wildcard_address(const std::string& a) { return a == "0.0.0.0" || a == "::" || a == "*" || a.empty(); }

// This machine's host name, short and canonical (as the resolver gives it: /etc/hosts, DNS).
void add_machine_names(std::vector<std::string>& names) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) return;
  names.push_back(host);
  addrinfo hints{};
  hints.ai_flags = AI_CANONNAME;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host, nullptr, &hints, &found) == 0) {
    if (found && found->ai_canonname) names.push_back(found->ai_canonname);
    ::freeaddrinfo(found);
  }
  const std::string name = host;
  if (const size_t dot = name.find('.'); dot != std::string::npos) names.push_back(name.substr(0, dot));
}

void add_interface_addresses(std::vector<std::string>& names) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
    else if (i->ifa_addr->sa_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, buf, sizeof buf);
    if (buf[0]) names.push_back(buf);
  }
  ::freeifaddrs(list);
}


}  // namespace


bool is_loopback_address(const std::string& a) {
  return a == "localhost" || a == "::1" || a.rfind("127.", 0) == 0;
}

std::vector<std::string> live_host_names(const LiveServerOptions& o) {
  std::vector<std::string> names;
  const bool wildcard = is_wildcard_address(o.address);
  if (!wildcard) names.push_back(o.address);
  if (wildcard || is_loopback_address(o.address)) {
    // Only a browser asked for these very names sends them: a rebound name never does.
    names.insert(names.end(), {"localhost", "127.0.0.1", "::1"});
  }
  if (!is_loopback_address(o.address)) {
    add_machine_names(names);
    if (wildcard) add_interface_addresses(names);
    names.insert(names.end(), o.also_hosts.begin(), o.also_hosts.end());
  }
  for (std::string& n : names) {
    if (n.size() > 2 && n.front() == '[' && n.back() == ']') n = n.substr(1, n.size() - 2);
    n = lower(n);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool host_header_allowed(const std::string& host, const std::vector<std::string>& names, int port) {
  std::string name = host, port_text;
  if (!name.empty() && name.front() == '[') {
    const size_t close = name.find(']');
    if (close == std::string::npos) return false;
    port_text = name.substr(close + 1);
    name = name.substr(1, close - 1);
    if (!port_text.empty() && port_text.front() != ':') return false;
    if (!port_text.empty()) port_text.erase(0, 1);
  } else if (const size_t colon = name.find(':'); colon != std::string::npos) {
    port_text = name.substr(colon + 1);
    name = name.substr(0, colon);
  }
  if (name.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos) return false;
  name = lower(name);
  if (std::find(names.begin(), names.end(), name) == names.end()) return false;
  // A loopback name on another port is a forwarded one (ssh -L 9000:127.0.0.1:PORT): no page
  // of another site can make a browser send it, so it is not a rebinding.
  if (name == "localhost" || name == "127.0.0.1" || name == "::1") return true;
  const int asked = port_text.empty() ? 80 : std::stoi(port_text);  // http:// without a port
  return asked == port;
}

LiveServerOptions parse_http_address(const std::string& text) {
  LiveServerOptions o;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw std::invalid_argument("--http: expected ADDRESS:PORT (e.g. 127.0.0.1:0), got '" + text + "'");
  std::string address = text.substr(0, colon);
  if (address.size() > 2 && address.front() == '[' && address.back() == ']') address = address.substr(1, address.size() - 2);
  if (address.find_first_of("[]") != std::string::npos)
    throw std::invalid_argument("--http: brackets only around an IPv6 address, got '" + text + "'");
  const std::string port = text.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoi(port) > 65535)
    throw std::invalid_argument("--http: the port must be 0..65535 (0 picks a free one), got '" + port + "'");
  o.address = address;
  o.port = std::stoi(port);
  return o;
}

LiveServer::LiveServer(const LiveServerOptions& o, int width, int height)
    : m_o(o), m_view(std::make_shared<LiveView>(width, height)), m_server(std::make_unique<GatedServer>(o.gate)) {
  httplib::Server& s = *m_server;
  s.new_task_queue = [] { return new InlineQueue; };  // gated_server.h
  // What the gate enforces, also told to clients in the Keep-Alive header.
  s.set_keep_alive_timeout(static_cast<time_t>(o.gate.keep_alive_seconds));
  s.set_keep_alive_max_count(static_cast<size_t>(o.gate.keep_alive_requests));
  s.set_payload_max_length(0);  // read-only: no request bodies
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // First, before the token: a page that rebound its own name to this machine must not even
    // learn whether a token is asked. The names themselves are not told.
    if (!host_header_allowed(req.get_header_value("Host"), m_host_names, m_port)) {
      res.status = 421;
      res.set_content(
          "misdirected request: this live view does not answer to that Host name; use the address it was "
          "started with, or this machine's name (docs/live.md, Security and limits)\n",
          "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content("read-only: GET and HEAD only\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!authorised(req, m_o.token)) {
      res.status = 401;
      res.set_content("a token is required: ?token=... or Authorization: Bearer ...\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.set_header("Cache-Control", "no-store");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  add_live_view_routes(s, "", [this](const httplib::Request&) { return m_view; });
  m_port = bind_gated(*m_server, o);
  m_host_names = live_host_names(o);
  m_thread = start_gated(*m_server);
}

LiveServer::~LiveServer() {
  m_server->stop();
  if (m_thread.joinable()) m_thread.join();
}

std::string LiveServer::url() const { return gated_url(m_o, m_port); }

}  // namespace farm
