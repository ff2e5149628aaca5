#include "live/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <stdexcept>

namespace farm {

namespace {

using Clock = ConnectionGate::Clock;

constexpr int k_wait_slice_ms = 100;  // a serving thread notices a shutdown within this

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int ms_until(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(ms, 0, 1000));
}

bool header_complete(const std::string& in, size_t from) {
  return in.find("\r\n\r\n", from) != std::string::npos || in.find("\n\n", from) != std::string::npos;
}

// Removes the Range and If-Range lines from the first request header in `in`. httplib answers
// a Range of N parts with N copies of the body built in memory: 2600 parts of "0-" (a 7.8 KB
// request) took the live view from 141 MB to 803 MB. Its answers are small and change every
// second, so it serves them whole and ignores ranges (docs/live.md).
void drop_range_headers(std::string& in) {
  size_t end = in.find("\r\n\r\n");
  if (end == std::string::npos) end = in.find("\n\n");
  if (end == std::string::npos) return;
  size_t line = in.find('\n');  // the request line stays
  while (line != std::string::npos && line < end) {
    const size_t start = line + 1;
    const size_t next = in.find('\n', start);
    const size_t colon = in.find(':', start);
    std::string name = colon != std::string::npos && colon < next ? in.substr(start, colon - start) : "";
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if ((name == "range" || name == "if-range") && next != std::string::npos && next <= end + 2) {
      in.erase(start, next - line);
      end -= next - line;
      continue;
    }
    line = next;
  }
}

std::string address_of(const sockaddr_storage& a, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
    port = ntohs(v6.sin6_port);
  }
  return text;
}

}  // namespace

struct ConnectionGate::Connection {
  Connection(int f, std::atomic<size_t>& b) : fd(f), buffered(b) {}
  ~Connection() {
    buffered -= out.size();
    ::close(fd);
  }
  bool flushing() const { return sent < out.size(); }
  // Drops what was sent; returns it to the gate's budget.
  void clear_out() {
    buffered -= out.size();
    out.clear();
    sent = 0;
  }
  int fd;
  std::atomic<size_t>& buffered;  // the gate's count of bytes in every `out`
  std::string in;       // read from the socket; in[pos..] not yet given to the server
  size_t pos = 0;
  std::string out;      // the end of an answer the client did not take at once; out[sent..] left
  size_t sent = 0;
  bool keep = false;    // after `out` is sent: wait for another request, or close
  // For a complete header while polled; for the answer (and sending `out`) once dispatched.
  Clock::time_point deadline;
  int served = 0;
};

namespace {

// One request's view of a connection for httplib: the header the poller read first, then the
// socket, every wait bounded by the request's deadline (GateOptions::write_seconds) so no
// client holds a serving thread longer, however slowly it sends or reads.
class GateStream final : public httplib::Stream {
 public:
  GateStream(ConnectionGate::Connection& c, const std::atomic<bool>& stop, size_t max_buffered)
      : m_c(c), m_stop(stop), m_max_buffered(max_buffered) {}

  bool is_readable() const override { return m_c.pos < m_c.in.size() || wait_for(POLLIN); }
  // Writable while answers can still be buffered (see write()).
  bool is_writable() const override { return m_c.buffered.load() < m_max_buffered || wait_for(POLLOUT); }
  ssize_t read(char* ptr, size_t size) override {
    if (m_c.pos == m_c.in.size()) {
      if (!wait_for(POLLIN)) return -1;
      char buf[4096];
      const ssize_t n = ::recv(m_c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? -1 : n;
      m_c.in.append(buf, static_cast<size_t>(n));
    }
    const size_t n = std::min(size, m_c.in.size() - m_c.pos);
    std::copy_n(m_c.in.data() + m_c.pos, n, ptr);
    m_c.pos += n;
    return static_cast<ssize_t>(n);
  }
  // What the client does not take at once goes to `out`, for the polling thread to send, while
  // the budget allows; past it, this thread waits for the client (until the deadline).
  ssize_t write(const char* ptr, size_t size) override {
    if (m_c.out.empty()) {
      const ssize_t n = ::send(m_c.fd, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n >= 0 && static_cast<size_t>(n) == size) return n;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (n > 0) return n;  // httplib calls again with the rest, which then is buffered or waited for
    }
    if (m_c.buffered.fetch_add(size) + size <= m_max_buffered) {
      m_c.out.append(ptr, size);
      return static_cast<ssize_t>(size);
    }
    m_c.buffered -= size;
    if (!m_c.out.empty()) return -1;  // bytes must leave in order: `out` first, and it is full
    if (!wait_for(POLLOUT)) return -1;
    return ::send(m_c.fd, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(m_c.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(m_c.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) ip = address_of(a, port);
  }
  socket_t socket() const override { return m_c.fd; }

 private:
  // Until the socket is ready, the request's deadline passes or the gate stops.
  bool wait_for(short events) const {
    for (;;) {
      if (m_stop.load()) return false;
      const int left = ms_until(m_c.deadline);
      pollfd p{m_c.fd, events, 0};
      const int r = ::poll(&p, 1, std::min(left, k_wait_slice_ms));
      if (r > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
      if (r < 0 && errno != EINTR) return false;
      if (left == 0) return false;
    }
  }
  ConnectionGate::Connection& m_c;
  const std::atomic<bool>& m_stop;
  size_t m_max_buffered;
};

// Sends what the socket takes of c.out; false when the connection broke.
bool send_some(ConnectionGate::Connection& c) {
  while (c.flushing()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      c.sent += static_cast<size_t>(n);
    } else {
      return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
  }
  return true;
}

}  // namespace

ConnectionGate::ConnectionGate(const GateOptions& o, Serve serve) : m_o(o), m_serve(std::move(serve)) {
  m_wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (m_wake_fd < 0) throw std::runtime_error("--http: cannot create an eventfd");
  m_poller = std::thread([this] { poll_loop(); });
  for (int i = 0; i < std::max(o.threads, 1); ++i) m_servers.emplace_back([this] { serve_loop(); });
}

ConnectionGate::~ConnectionGate() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);  // so no serving thread misses the notification
    m_stop = true;
  }
  wake();
  m_ready_cv.notify_all();
  m_poller.join();
  for (std::thread& t : m_servers) t.join();
  ::close(m_wake_fd);
}

void ConnectionGate::wake() {
  const uint64_t one = 1;
  (void)::write(m_wake_fd, &one, sizeof one);
}

void ConnectionGate::admit(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  auto c = std::make_unique<Connection>(fd, m_buffered);
  c->deadline = after(m_o.first_request_seconds);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_open;
    m_incoming.push_back(std::move(c));
  }
  wake();
}

void ConnectionGate::hand_back(std::unique_ptr<Connection> c, bool keep) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if ((!keep && !c->flushing()) || m_stop) {
    --m_open;
    return;  // `c` closes its socket
  }
  c->in.erase(0, c->pos);  // what is left is the start of a next (pipelined) request
  c->pos = 0;
  c->keep = keep;
  // Still sending: the answer's deadline stands; then the next request has its own.
  if (!c->flushing()) c->deadline = after(m_o.keep_alive_seconds);
  m_incoming.push_back(std::move(c));
  wake();
}

void ConnectionGate::poll_loop() {
  std::vector<std::unique_ptr<Connection>> waiting;  // for a complete request header
  std::vector<pollfd> fds;
  auto close_at = [&](size_t i) {
    waiting[i] = std::move(waiting.back());
    waiting.pop_back();
    std::lock_guard<std::mutex> lock(m_mutex);
    --m_open;
  };
  auto dispatch_at = [&](size_t i) {
    std::unique_ptr<Connection> c = std::move(waiting[i]);
    waiting[i] = std::move(waiting.back());
    waiting.pop_back();
    c->deadline = after(m_o.write_seconds);
    std::lock_guard<std::mutex> lock(m_mutex);
    m_ready.push_back(std::move(c));
    m_ready_cv.notify_one();
  };
  while (!m_stop) {
    size_t open = 0;
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      for (auto& c : m_incoming) waiting.push_back(std::move(c));
      m_incoming.clear();
      open = m_open;
    }
    // Too many open: close those that have waited longest (the earliest deadlines) first.
    while (open > m_o.max_connections && !waiting.empty()) {
      auto oldest = std::min_element(waiting.begin(), waiting.end(),
                                     [](const auto& a, const auto& b) { return a->deadline < b->deadline; });
      close_at(static_cast<size_t>(oldest - waiting.begin()));
      --open;
    }
    Clock::time_point next = after(1.0);
    fds.assign(1, pollfd{m_wake_fd, POLLIN, 0});
    for (const auto& c : waiting) {
      fds.push_back(pollfd{c->fd, static_cast<short>(c->flushing() ? POLLOUT : POLLIN), 0});
      next = std::min(next, c->deadline);
    }
    // A handed-back connection may already hold a whole next request: poll without waiting.
    bool pending = std::any_of(waiting.begin(), waiting.end(),
                               [](const auto& c) { return !c->flushing() && header_complete(c->in, 0); });
    if (::poll(fds.data(), fds.size(), pending ? 0 : std::max(ms_until(next), 1)) < 0 && errno != EINTR) continue;
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      (void)::read(m_wake_fd, &count, sizeof count);
    }
    const Clock::time_point now = Clock::now();
    // Backwards: closing or dispatching moves the last connection into slot i; fds[i + 1] is
    // the entry of the connection that was in slot i when polled.
    for (size_t i = waiting.size(); i-- > 0;) {
      switch (on_polled(*waiting[i], fds[i + 1].revents, now)) {
        case Next::close: close_at(i); break;
        case Next::serve: dispatch_at(i); break;
        case Next::wait: break;
      }
    }
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  m_open -= waiting.size();
}

ConnectionGate::Next ConnectionGate::on_polled(Connection& c, short revents, Clock::time_point now) const {
  if (c.flushing()) {
    if ((revents & (POLLOUT | POLLHUP | POLLERR)) && !send_some(c)) return Next::close;  // it broke
    if (c.flushing()) return now >= c.deadline ? Next::close : Next::wait;              // too slow a reader
    if (!c.keep) return Next::close;  // answered with Connection: close
    c.clear_out();
    c.deadline = after(m_o.keep_alive_seconds);  // now waiting for its next request
    return Next::wait;
  }
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return Next::close;  // the client closed it, or it broke
    }
  }
  if (header_complete(c.in, 0)) return Next::serve;
  // Idle, too slow, or a header larger than any real client's.
  return c.in.size() > m_o.max_header_bytes || now >= c.deadline ? Next::close : Next::wait;
}

void ConnectionGate::serve_loop() {
  for (;;) {
    std::unique_ptr<Connection> c;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_ready_cv.wait(lock, [this] { return m_stop || !m_ready.empty(); });
      if (m_stop) {
        m_open -= m_ready.size();
        m_ready.clear();
        return;
      }
      c = std::move(m_ready.front());
      m_ready.pop_front();
    }
    drop_range_headers(c->in);
    GateStream stream(*c, m_stop, m_o.max_buffered_bytes);
    const bool last = c->served + 1 >= m_o.keep_alive_requests;
    bool keep = false;
    try {
      keep = m_serve(stream, last) && !last;
    } catch (...) {
      keep = false;  // httplib reports handler errors itself; anything else ends the connection
    }
    ++c->served;
    hand_back(std::move(c), keep);
  }
}

}  // namespace farm
