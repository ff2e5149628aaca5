// The live view's web server (`--http ADDR:PORT`): cpp-httplib on threads of its own, serving
// one job's LiveView (live_view.h) at / (the routes: live_view_routes.h).
// Read-only (GET and HEAD). It reads the last published status and the LiveImage, never the
// scheduler: the ZeroMQ loop publishes, the server copies. Idle and slow clients hold no serving
// thread until their request is in (connection_gate.h), and none longer than its write deadline;
// never the loop.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "live/connection_gate.h"
#include "live/live_view.h"

namespace farm {

class GatedServer;  // gated_server.h

struct LiveServerOptions {
  std::string address = "127.0.0.1";  // to bind; not loopback needs a token
  int port = 0;                       // 0: any free port
  std::string token;                  // required as ?token= or "Authorization: Bearer" when set
  // Names (or addresses) clients may also use in their Host header, off loopback: the address
  // the workers are told (render --advertise). The bound address and, off loopback, this
  // machine's names are always served (live_host_names).
  std::vector<std::string> also_hosts;
  GateOptions gate;                   // threads, connections, deadlines (connection_gate.h)
};

// "127.0.0.1:8080" or "[::1]:0" -> address and port; throws std::invalid_argument naming the
// option and what is wrong.
LiveServerOptions parse_http_address(const std::string& text);
bool is_loopback_address(const std::string& address);

// The names a request's Host header may carry (lower case, IPv6 without brackets), so a web page
// cannot read the live view through a name rebound to this machine (DNS rebinding): the bound
// address; on loopback also localhost, 127.0.0.1 and ::1; on a wildcard or another address this
// machine's host names (short and canonical), on a wildcard every address of its interfaces and
// the loopback ones (it listens there too), and `o.also_hosts`.
std::vector<std::string> live_host_names(const LiveServerOptions& o);
// Whether `host` (a Host header: NAME, NAME:PORT, [V6] or [V6]:PORT; no port means 80) names
// one of `names` on `port` (a loopback name on any port: a forwarded port, ssh -L). Case does
// not matter, nor a trailing dot of a name.
bool host_header_allowed(const std::string& host, const std::vector<std::string>& names, int port);

class LiveServer {
 public:
  // Binds (throws std::runtime_error saying why it cannot) and starts serving.
  LiveServer(const LiveServerOptions& o, int width, int height);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  int port() const { return m_port; }
  // http://ADDRESS:PORT/ (with ?token=... when a token is required), for the log.
  std::string url() const;

  LiveView& view() { return *m_view; }

 private:
  LiveServerOptions m_o;
  std::vector<std::string> m_host_names;  // live_host_names(m_o), set before serving
  std::shared_ptr<LiveView> m_view;
  std::unique_ptr<GatedServer> m_server;  // destroyed before what its handlers read
  int m_port = 0;
  std::thread m_thread;
};

}  // namespace farm
