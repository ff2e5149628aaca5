#include "live/gated_server.h"

#include <netdb.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>

#include "base/file_checks.h"

namespace farm {

// Why httplib could not bind (it says only "false"): the same bind, tried once more here for
// its errno ("Address already in use", "Cannot assign requested address", ...).
std::string bind_failure_reason(const std::string& address, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    return std::string("the address does not resolve: ") + ::gai_strerror(rc);
  }
  int err = 0;
  for (addrinfo* a = found; a && err == 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      break;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // as httplib binds
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) err = errno;
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return err ? os_reason(err) : "the address and port were taken, then freed again";
}

bool authorised(const httplib::Request& req, const std::string& token) {
  if (token.empty()) return true;
  if (req.get_param_value("token") == token) return true;
  return req.get_header_value("Authorization") == "Bearer " + token;
}

int bind_gated(GatedServer& s, const LiveServerOptions& o) {
  const int port = o.port == 0 ? s.bind_to_any_port(o.address) : (s.bind_to_port(o.address, o.port) ? o.port : -1);
  if (port <= 0)
    throw std::runtime_error("--http: cannot listen on " + o.address + ":" + std::to_string(o.port) + ": " +
                             bind_failure_reason(o.address, o.port));
  s.widen_backlog(k_listen_backlog);
  return port;
}

std::string gated_url(const LiveServerOptions& o, int port) {
  const std::string host = o.address.find(':') != std::string::npos ? "[" + o.address + "]" : o.address;
  return "http://" + (host == "0.0.0.0" || host == "[::]" ? std::string("HOST") : host) + ":" + std::to_string(port) +
         "/" + (o.token.empty() ? "" : "?token=" + o.token);
}

std::thread start_gated(GatedServer& s) {
  std::thread thread([&s] { s.listen_after_bind(); });
  // stop() only ends a server that is already listening: wait for that, so the destructor
  // cannot miss it and wait forever.
  for (int i = 0; i < 5000 && !s.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return thread;
}

}  // namespace farm
