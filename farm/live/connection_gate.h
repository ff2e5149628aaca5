// What stands between the live view's sockets and its few serving threads. cpp-httplib serves a
// connection on one thread from its accept to its close, so every idle or slow socket held a
// thread: 20 idle connections delayed /api/status by 10 s (4 threads, 2 s keep-alive each).
// Here one thread polls every open connection and reads what arrives; only a connection whose
// request header is complete goes to a serving thread, which answers that one request and hands
// the connection back. A header must be complete within a deadline counted from the accept (or
// the previous answer), not per byte, so a client sending a byte a second is cut off like an
// idle one, and neither holds a serving thread. Likewise an answer the client does not read at
// once is left to the polling thread to send (within a memory budget), so a client that reads
// slowly or not at all does not hold a serving thread either. Limits: docs/live.md.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Stream;
}

namespace farm {

struct GateOptions {
  int threads = 4;                     // requests answered at once
  size_t max_connections = 256;        // open at once; beyond, the one idle longest is closed
  double first_request_seconds = 2.0;  // from the accept to a complete request header
  double keep_alive_seconds = 2.0;     // from an answer to the next complete request header
  int keep_alive_requests = 20;        // per connection; the last answer says Connection: close
  double write_seconds = 5.0;          // to send one answer, however slowly the client reads
  // Answers a client does not take at once wait in memory, sent by the polling thread, up to
  // this much for all connections together; beyond it a serving thread waits for the client.
  size_t max_buffered_bytes = size_t{64} << 20;
  size_t max_header_bytes = 8192;      // a longer header is refused (closed)
};

class ConnectionGate {
 public:
  // `serve` answers one request read from the stream; `last` asks it to close the connection
  // afterwards. It returns whether the connection may serve another (httplib::Server's
  // process_request, with what the client asked: "Connection: close", HTTP/1.0).
  using Serve = std::function<bool(httplib::Stream& stream, bool last)>;
  ConnectionGate(const GateOptions& o, Serve serve);
  ~ConnectionGate();  // closes every connection and joins its threads
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Takes an accepted socket (any thread; does not block).
  void admit(int fd);

  struct Connection;  // a socket and what was read from it (connection_gate.cpp)
  using Clock = std::chrono::steady_clock;

 private:
  enum class Next { wait, serve, close };
  void poll_loop();
  // What becomes of a polled connection: reads what arrived, or sends what it owes.
  Next on_polled(Connection& c, short revents, Clock::time_point now) const;
  void serve_loop();
  // A served connection back to the polling thread, or closed.
  void hand_back(std::unique_ptr<Connection> c, bool keep);
  void wake();

  GateOptions m_o;
  Serve m_serve;
  int m_wake_fd = -1;
  std::mutex m_mutex;
  std::condition_variable m_ready_cv;
  std::atomic<bool> m_stop{false};
  std::vector<std::unique_ptr<Connection>> m_incoming;  // admitted or handed back, for the poller
  std::deque<std::unique_ptr<Connection>> m_ready;      // whole request header read, to serve
  size_t m_open = 0;                                    // every connection not yet closed
  std::atomic<size_t> m_buffered{0};                    // bytes of answers waiting to be sent
  std::thread m_poller;
  std::vector<std::thread> m_servers;
};

}  // namespace farm
