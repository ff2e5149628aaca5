// What the farm's web servers share (the live view's, live_server.h, and the service's page,
// queue_server.h): httplib's server with its per-connection loop replaced by the connection gate
// (connection_gate.h), binding with a reason when it fails, starting on a thread of its own, and
// the token check. Internal to farm/live.
#pragma once

#include <httplib.h>
#include <sys/socket.h>

#include <functional>
#include <string>
#include <thread>

#include "live/connection_gate.h"
#include "live/live_server.h"

namespace farm {

inline constexpr int k_listen_backlog = 512;  // connections the kernel holds until accepted

// The accepting thread hands each socket to the gate at once (it polls and does not block).
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// httplib's server with its per-connection loop replaced: an accepted socket goes to the gate
// (connection_gate.h), which calls back for one request at a time once its header is in.
class GatedServer : public httplib::Server {
 public:
  explicit GatedServer(const GateOptions& o)
      : m_gate(o, [this](httplib::Stream& s, bool last) {
          bool closed = false;
          const bool ok = process_request(s, last, closed, nullptr);
          return ok && !closed;
        }) {}
  ~GatedServer() override { stop(); }
  // httplib listens with a backlog of 5 (compiled into Debian's library): a burst of clients
  // beyond it while the accepting thread waits for a core had its SYNs dropped, and the
  // kernel's one-second SYN retry made a poll take over 1 s. Listening again resizes it.
  void widen_backlog(int backlog) { ::listen(svr_sock_, backlog); }

 private:
  // Called by httplib's accepting thread (through InlineQueue) for each connection.
  bool process_and_close_socket(socket_t sock) override {
    m_gate.admit(sock);
    return true;
  }
  ConnectionGate m_gate;
};

// Why httplib could not bind (it says only "false"): the same bind, tried once more for its errno.
std::string bind_failure_reason(const std::string& address, int port);
// Whether the request carries the token (?token= or "Authorization: Bearer"); any request when
// there is none.
bool authorised(const httplib::Request& req, const std::string& token);
// Binds to o.address:o.port (port 0: any free one) and returns the port; throws
// std::runtime_error naming the address and the reason.
int bind_gated(GatedServer& server, const LiveServerOptions& o);
// http://ADDRESS:PORT/ (HOST for a wildcard address; with ?token=... when a token is required), for the log.
std::string gated_url(const LiveServerOptions& o, int port);
// Listens on a thread of its own, returned once the server is running (so that stop() ends it).
std::thread start_gated(GatedServer& server);

}  // namespace farm
