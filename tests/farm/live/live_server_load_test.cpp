// The live view under idle and slow clients (docs/live.md, Limits): connections that send
// nothing, or one byte a second, must not keep the page from anyone else. The server in
// process, the clients raw sockets; a poll is a fresh connection, as a browser's first one.
#include <doctest/doctest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "live/live_server.h"

TEST_SUITE_BEGIN("integration");

using namespace farm;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A connected TCP socket to 127.0.0.1:port (-1 if it cannot connect); `receive_buffer` > 0
// makes the client's kernel hold at most about that much of what the server sends.
int connect_to(int port, int receive_buffer = 0) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && receive_buffer > 0) ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

struct Sockets {
  std::vector<int> fds;
  ~Sockets() {
    for (int fd : fds) ::close(fd);
  }
};

// Whether the server has closed `fd` (end of stream or reset), without waiting.
bool closed_by_server(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  char c;
  const ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// One poll as the page makes it: GET /api/status on a new connection. Returns its duration in
// seconds, or a negative number when it failed (no answer within 3 s, or not 200).
double timed_status_poll(int port) {
  const Clock::time_point start = Clock::now();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(3, 0);
  c.set_read_timeout(3, 0);
  auto r = c.Get("/api/status");
  const double took = seconds_since(start);
  return r && r->status == 200 && r->body.find("\"blocks_done\": 7") != std::string::npos ? took : -1;
}

struct PollRecord {
  int answered = 0, failed = 0;
  double slowest = 0;
};

// Polls every 100 ms for `seconds`, calling `between` before each poll.
template <class F>
PollRecord poll_for(int port, double seconds, F between) {
  PollRecord r;
  const Clock::time_point start = Clock::now();
  while (seconds_since(start) < seconds && r.failed < 3) {
    between();
    const double took = timed_status_poll(port);
    if (took < 0) {
      ++r.failed;
    } else {
      ++r.answered;
      r.slowest = std::max(r.slowest, took);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return r;
}

LiveStatus status_with_seven_blocks() {
  LiveStatus st;
  st.scene = "x.toml";
  st.blocks_done = 7;
  return st;
}

}  // namespace

TEST_CASE("live: 200 idle connections do not keep /api/status from answering within 1 s") {
  LiveServer server(LiveServerOptions{}, 64, 48);
  server.view().publish(status_with_seven_blocks());
  Sockets idle;
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_to(server.port());
    REQUIRE(fd >= 0);
    idle.fds.push_back(fd);
  }
  // 3 s: past the first request's deadline (2 s), so the server has also closed them by then.
  const PollRecord r = poll_for(server.port(), 3.0, [] {});
  MESSAGE("200 idle: " << r.answered << " polls, slowest " << r.slowest << " s");
  CHECK(r.failed == 0);
  CHECK(r.answered >= 10);
  CHECK(r.slowest < 1.0);
  int closed = 0;
  for (int fd : idle.fds) closed += closed_by_server(fd);
  CHECK(closed == 200);  // an idle socket is closed, not kept forever
}

TEST_CASE("live: clients sending one byte a second (slowloris) do not keep /api/status from answering within 1 s") {
  LiveServer server(LiveServerOptions{}, 64, 48);
  server.view().publish(status_with_seven_blocks());
  const std::string request =
      "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\nUser-Agent: slow\r\n\r\n";
  Sockets slow;
  for (int i = 0; i < 50; ++i) {
    const int fd = connect_to(server.port());
    REQUIRE(fd >= 0);
    slow.fds.push_back(fd);
  }
  size_t sent = 0;  // bytes of `request` each slow client has sent
  Clock::time_point last_byte = Clock::now() - std::chrono::seconds(1);
  const PollRecord r = poll_for(server.port(), 4.0, [&] {
    if (seconds_since(last_byte) < 1.0 || sent >= request.size()) return;
    for (int fd : slow.fds) (void)::send(fd, &request[sent], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    ++sent;
    last_byte = Clock::now();
  });
  MESSAGE("50 slowloris: " << r.answered << " polls, slowest " << r.slowest << " s");
  CHECK(r.failed == 0);
  CHECK(r.answered >= 15);
  CHECK(r.slowest < 1.0);
  // Four bytes in four seconds, nowhere near a whole request line: each was cut off.
  REQUIRE(sent < request.size());
  int closed = 0;
  for (int fd : slow.fds) closed += closed_by_server(fd);
  CHECK(closed == 50);
}

TEST_CASE("live: a kept-alive connection serves several requests, and a request split over packets is served") {
  LiveServer server(LiveServerOptions{}, 64, 48);
  server.view().publish(status_with_seven_blocks());
  httplib::Client c("127.0.0.1", server.port());
  c.set_keep_alive(true);
  for (int i = 0; i < 5; ++i) {
    auto r = c.Get("/api/status");
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->get_header_value("Connection") != "close");
  }
  // Two requests in one write (pipelined), the second split in two writes: both answered.
  const int fd = connect_to(server.port());
  REQUIRE(fd >= 0);
  Sockets s{{fd}};
  const std::string host = "127.0.0.1:" + std::to_string(server.port());  // a Host it serves (live_host_names)
  const std::string one = "GET /metrics HTTP/1.1\r\nHost: " + host + "\r\n\r\nGET /api/status HTTP/1.1\r\nHo";
  REQUIRE(::send(fd, one.data(), one.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(one.size()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string two = "st: " + host + "\r\nConnection: close\r\n\r\n";
  REQUIRE(::send(fd, two.data(), two.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(two.size()));
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<size_t>(n));
  CHECK(got.find("farm_blocks_done_total 7") != std::string::npos);
  CHECK(got.find("\"blocks_done\": 7") != std::string::npos);
}

TEST_CASE("live: a Range of many parts is ignored: the image is served once, whole") {
  // httplib answers a Range of N parts with N copies of the body, built in memory first: a
  // 7.8 KB request of 2600 parts took the live view from 141 MB to 803 MB (issue 26's second
  // adversarial pass). The live view ignores ranges (its answers change every second).
  LiveServer server(LiveServerOptions{}, 64, 48);
  server.view().publish(status_with_seven_blocks());
  httplib::Client c("127.0.0.1", server.port());
  auto whole = c.Get("/image.png");
  REQUIRE(whole);
  REQUIRE(whole->status == 200);
  std::string ranges = "bytes=0-";
  for (int i = 0; i < 2600; ++i) ranges += ",0-";
  for (const char* path : {"/image.png", "/api/status", "/metrics"}) {
    CAPTURE(path);
    auto r = c.Get(path, {{"Range", ranges}, {"If-Range", "x"}});
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->get_header_value("Content-Type").find("multipart") == std::string::npos);
    if (std::string(path) == "/image.png") CHECK(r->body.size() == whole->body.size());
    CHECK(r->body.size() < 100'000);
  }
}

TEST_CASE("live: clients that never read their answers (a large PNG) do not keep /api/status from answering within 1 s") {
  // Noise does not compress: the PNG is some 7 MB, far more than the kernel buffers between
  // the server and a client that reads nothing.
  const int side = 1536;
  LiveServer server(LiveServerOptions{}, side, side);
  server.view().publish(status_with_seven_blocks());
  std::vector<uint8_t> noise(static_cast<size_t>(side) * side * 3);
  std::mt19937 rng(7);
  for (uint8_t& v : noise) v = static_cast<uint8_t>(rng());
  server.view().image().place_rgb8(0, 0, side, side, noise.data());
  // Encoded once, here: what is measured below is the clients that do not read, not the
  // encoding (several hundred ms for this image, which every request for it waits for).
  std::string png;
  {
    httplib::Client c("127.0.0.1", server.port());
    auto r = c.Get("/image.png");
    REQUIRE(r);
    png = r->body;
    REQUIRE(png.size() > 6'000'000);
  }
  Sockets stuck;
  const std::string get_png = "GET /image.png HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server.port()) + "\r\n\r\n";
  for (int i = 0; i < 8; ++i) {  // twice the serving threads
    const int fd = connect_to(server.port(), 4096);
    REQUIRE(fd >= 0);
    REQUIRE(::send(fd, get_png.data(), get_png.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(get_png.size()));
    stuck.fds.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the answers begun
  const PollRecord r = poll_for(server.port(), 3.0, [] {});
  MESSAGE("8 clients not reading a 7 MB PNG: " << r.answered << " polls, slowest " << r.slowest << " s");
  CHECK(r.failed == 0);
  CHECK(r.answered >= 10);
  CHECK(r.slowest < 1.0);
  // A client that reads at last (within the answer's 5 s) gets the whole answer, in order.
  std::string got;
  char buf[65536];
  const int fd = stuck.fds[0];
  auto whole = [&] {
    const size_t end = got.find("\r\n\r\n");
    return end != std::string::npos && got.size() >= end + 4 + png.size();
  };
  for (ssize_t n; !whole() && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<size_t>(n));
  const size_t body = got.find("\r\n\r\n");
  REQUIRE(body != std::string::npos);
  CHECK(got.find("Content-Length: " + std::to_string(png.size())) < body);
  CHECK(got.compare(body + 4, std::string::npos, png) == 0);
}

TEST_CASE("live: beyond its connection limit the server closes the connections idle longest, and still answers") {
  LiveServerOptions o;
  o.gate.max_connections = 16;
  LiveServer server(o, 64, 48);
  server.view().publish(status_with_seven_blocks());
  Sockets idle;
  for (int i = 0; i < 40; ++i) {
    const int fd = connect_to(server.port());
    REQUIRE(fd >= 0);
    idle.fds.push_back(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // an order to evict them in
  }
  const PollRecord r = poll_for(server.port(), 0.5, [] {});
  CHECK(r.failed == 0);
  CHECK(r.answered >= 3);
  CHECK(r.slowest < 1.0);
  // Well before the 2 s deadline: only the limit can have closed them, the oldest first.
  int closed = 0;
  for (int fd : idle.fds) closed += closed_by_server(fd);
  CHECK(closed >= 40 - 16);
  CHECK(closed_by_server(idle.fds.front()));
  CHECK_FALSE(closed_by_server(idle.fds.back()));
}

TEST_SUITE_END();
