// The live view (`--http`): the server on its own (status, metrics, image, token, read-only),
// then during a real `farm render` with two workers, and the page in a real headless browser.
#include <doctest/doctest.h>
#include <httplib.h>

#include <OpenImageIO/imageio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "farm/farm_fixture.h"
#include "farm/launched_workers.h"
#include "live/live_server.h"

TEST_SUITE_BEGIN("integration");

using namespace farm;
using namespace farm_fixture;

namespace {

// The pixels of an image file as 8-bit RGB (empty if it cannot be read).
std::vector<uint8_t> rgb8_of(const std::string& path, int& w, int& h) {
  auto in = OIIO::ImageInput::open(path);
  if (!in) return {};
  const OIIO::ImageSpec& spec = in->spec();
  w = spec.width;
  h = spec.height;
  std::vector<uint8_t> all(static_cast<size_t>(w) * h * spec.nchannels);
  if (!in->read_image(0, 0, 0, spec.nchannels, OIIO::TypeDesc::UINT8, all.data())) return {};
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < static_cast<size_t>(w) * h; ++i)
    for (int c = 0; c < 3; ++c) rgb[3 * i + c] = all[i * spec.nchannels + c];
  return rgb;
}

std::string url_in(const std::string& log) {
  std::smatch m;
  if (std::regex_search(log, m, std::regex("live view: (http://127\\.0\\.0\\.1:[0-9]+/)"))) return m[1];
  return {};
}

int port_of(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

}  // namespace

TEST_CASE("live: --http ADDRESS:PORT is parsed, and a bad one is named") {
  LiveServerOptions o = parse_http_address("127.0.0.1:0");
  CHECK(o.address == "127.0.0.1");
  CHECK(o.port == 0);
  o = parse_http_address("[::1]:8080");
  CHECK(o.address == "::1");
  CHECK(o.port == 8080);
  CHECK(is_loopback_address("127.0.0.1"));
  CHECK(is_loopback_address("localhost"));
  CHECK_FALSE(is_loopback_address("0.0.0.0"));
  for (const char* bad : {"8080", "127.0.0.1:", ":80", "127.0.0.1:http", "127.0.0.1:70000", "[::1:80"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_http_address(bad), doctest::Contains("--http"), std::invalid_argument);
  }
}

TEST_CASE("live: the server serves status, metrics and the image so far, asks for its token and refuses writes") {
  LiveServerOptions o;
  o.token = "s3cret";
  LiveServer server(o, 8, 4);
  REQUIRE(server.port() > 0);
  CHECK(server.url() == "http://127.0.0.1:" + std::to_string(server.port()) + "/?token=s3cret");
  LiveStatus st;
  st.scene = "x.toml";
  st.blocks_done = 7;
  server.view().publish(st);
  const uint8_t red[3 * 4] = {255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0};
  server.view().image().place_rgb8(2, 1, 2, 2, red);

  httplib::Client c("127.0.0.1", server.port());
  CHECK(c.Get("/api/status")->status == 401);  // no token
  CHECK(c.Get("/api/status?token=wrong")->status == 401);
  auto status = c.Get("/api/status?token=s3cret");
  REQUIRE(status);
  CHECK(status->status == 200);
  CHECK(status->body.find("\"blocks_done\": 7") != std::string::npos);
  httplib::Headers bearer = {{"Authorization", "Bearer s3cret"}};
  auto metrics = c.Get("/metrics", bearer);
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->body.find("farm_blocks_done_total 7") != std::string::npos);
  auto page = c.Get("/?token=s3cret");
  REQUIRE(page);
  CHECK(page->body.find("<title>farm: live</title>") != std::string::npos);
  // Self-contained: nothing it loads names another server.
  CHECK(page->body.find("http://") == std::string::npos);
  CHECK(page->body.find("https://") == std::string::npos);
  auto png = c.Get("/image.png?token=s3cret");
  REQUIRE(png);
  REQUIRE(png->status == 200);
  CHECK(png->get_header_value("Content-Type") == "image/png");
  const std::string file = (test_paths::temp_dir("live_png") / "live.png").string();
  std::ofstream(file, std::ios::binary) << png->body;
  int w = 0, h = 0;
  std::vector<uint8_t> rgb = rgb8_of(file, w, h);
  REQUIRE(rgb.size() == 8 * 4 * 3);
  CHECK(rgb[(1 * 8 + 2) * 3] == 255);  // the placed block
  CHECK(rgb[(2 * 8 + 3) * 3] == 255);
  CHECK(rgb[0] == 0);  // not done yet: black
  auto post = c.Post("/api/status?token=s3cret", "x", "text/plain");
  REQUIRE(post);
  CHECK(post->status == 405);
}

TEST_CASE("live: on loopback the server answers only the Host names it serves (no DNS rebinding)") {
  LiveServer server(LiveServerOptions{}, 8, 4);
  const std::string port = std::to_string(server.port());
  httplib::Client c("127.0.0.1", server.port());
  const auto status_for = [&](const std::string& host) {
    auto r = c.Get("/api/status", httplib::Headers{{"Host", host}});
    return r ? r->status : -1;
  };
  // A loopback name on another port is a forwarded one (ssh -L 9000:127.0.0.1:PORT): served.
  for (const std::string& ok : {"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port,
                                std::string("localhost:9000"), std::string("127.0.0.1")}) {
    CAPTURE(ok);
    CHECK(status_for(ok) == 200);
  }
  // A page that rebound its own name to 127.0.0.1 sends its own name: refused, whatever the path.
  for (const std::string& bad : {"evil.example:" + port, std::string("evil.example"), "127.0.0.1.evil.example:" + port,
                                 "localhost.evil.example:" + port, "::1:" + port, "[::1]x:" + port, std::string("")}) {
    CAPTURE(bad);
    CHECK(status_for(bad) == 421);
  }
  auto page = c.Get("/", httplib::Headers{{"Host", "evil.example:" + port}});
  REQUIRE(page);
  CHECK(page->status == 421);
  CHECK(page->body.find("misdirected request") != std::string::npos);
  CHECK(page->body.find("<title>") == std::string::npos);
  CHECK(c.Get("/image.png", httplib::Headers{{"Host", "evil.example:" + port}})->status == 421);
}

TEST_CASE("live: on a wildcard address the server also answers this machine's names and addresses, and --advertise's") {
  LiveServerOptions o = parse_http_address("0.0.0.0:0");
  o.token = "t";
  o.also_hosts = {"Render-Head.Example"};
  const std::vector<std::string> names = live_host_names(o);
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  LiveServer server(o, 8, 4);
  const std::string port = std::to_string(server.port());
  CHECK(host_header_allowed(std::string(host) + ":" + port, names, server.port()));
  CHECK(host_header_allowed("render-head.example:" + port, names, server.port()));
  CHECK(host_header_allowed("render-head.example.:" + port, names, server.port()));
  CHECK(host_header_allowed("127.0.0.1:" + port, names, server.port()));
  CHECK_FALSE(host_header_allowed("evil.example:" + port, names, server.port()));
  CHECK_FALSE(host_header_allowed(std::string(host) + ":" + std::to_string(server.port() + 1), names, server.port()));
  // Port 80 is the one a Host without a port means.
  CHECK(host_header_allowed("render-head.example", names, 80));
  CHECK_FALSE(host_header_allowed("render-head.example", names, 8080));
  httplib::Client c("127.0.0.1", server.port());
  auto mine = c.Get("/api/status?token=t", httplib::Headers{{"Host", std::string(host) + ":" + port}});
  REQUIRE(mine);
  CHECK(mine->status == 200);
  auto evil = c.Get("/api/status?token=t", httplib::Headers{{"Host", "evil.example:" + port}});
  REQUIRE(evil);
  CHECK(evil->status == 421);
  // Bound to one non-loopback address, the loopback names are not served (it does not listen there).
  LiveServerOptions one;
  one.address = "192.0.2.7";
  const std::vector<std::string> one_names = live_host_names(one);
  CHECK(host_header_allowed("192.0.2.7:8080", one_names, 8080));
  CHECK(host_header_allowed(std::string(host) + ":8080", one_names, 8080));
  CHECK_FALSE(host_header_allowed("localhost:8080", one_names, 8080));
}

TEST_CASE("live: an address off loopback without a token is refused before any work") {
  Fixture f("live_refused", 2);
  const std::string log = f.path("render.log");
  CHECK(test_process::run({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--workers", "1", "--no-journal", "--http",
                           "0.0.0.0:0"},
                          log, 60) == 2);
  CHECK(launched_workers::read_text(log).find("--http-token") != std::string::npos);
  CHECK_FALSE(fs::exists(f.path("farm.png")));
}

TEST_CASE("live: during farm render with two workers /api/status reaches 100%, /metrics parses, /image.png is the final image") {
  Fixture f("live_render", 400);
  const std::string out = f.path("farm.png");
  test_process::Child render({k_farm, "render", f.scene, "-o", out, "--workers", "2", "--threads", "1", "--no-journal",
                              "--block", "8", "--http", "127.0.0.1:0", "--http-linger", "30"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("live view: http://", 30));
  const std::string url = url_in(render.log());
  REQUIRE(!url.empty());
  httplib::Client c("127.0.0.1", port_of(url));
  std::vector<double> progress;
  std::string last;
  for (int i = 0; i < 1200; ++i) {
    auto r = c.Get("/api/status");
    REQUIRE(r);
    last = r->body;
    std::smatch m;
    REQUIRE(std::regex_search(last, m, std::regex("\"progress\": ([0-9.]+)")));
    progress.push_back(std::stod(m[1]));
    if (last.find("\"finished\": true") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(last.find("\"finished\": true") != std::string::npos);
  CHECK(progress.back() == doctest::Approx(1.0));
  CHECK(std::is_sorted(progress.begin(), progress.end()));
  CHECK(progress.front() < 1.0);  // seen while rendering, not only at the end
  CHECK(last.find("\"name\": \"local-1\"") != std::string::npos);
  CHECK(last.find("\"name\": \"local-2\"") != std::string::npos);
  auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->get_header_value("Content-Type").find("version=0.0.4") != std::string::npos);
  CHECK(metrics->body.find("farm_finished 1\n") != std::string::npos);
  CHECK(std::regex_search(metrics->body, std::regex("farm_worker_blocks_total\\{worker=\"local-1\",id=\"[0-9]+\"\\} [1-9]")));
  auto png = c.Get("/image.png");
  REQUIRE(png);
  const std::string live_file = f.path("live.png");
  std::ofstream(live_file, std::ios::binary) << png->body;
  int w1 = 0, h1 = 0, w2 = 0, h2 = 0;
  std::vector<uint8_t> live = rgb8_of(live_file, w1, h1), final_image = rgb8_of(out, w2, h2);
  REQUIRE(!live.empty());
  CHECK(w1 == w2);
  CHECK(h1 == h2);
  CHECK(live == final_image);
  CHECK(test_process::same_file(out, f.reference));  // the live view changes nothing of the output
  render.kill(SIGTERM);
  CHECK(render.wait(20) == 0);
}

TEST_CASE("live: headless Chromium shows the image and the worker table during a render") {
  const char* chromium = "/usr/bin/chromium";
  if (::access(chromium, X_OK) != 0) {
    MESSAGE("skipped: no " << chromium << " (Debian package chromium; tools/setup.sh installs it)");
    return;
  }
  // A job far longer than the browser needs (it is stopped below once the page is dumped): with
  // 2000 spp a loaded CI machine once finished it before Chromium had loaded the page. The
  // fixture's reference is not used here, so it stays cheap.
  Fixture f("live_browser", 2);
  test_process::Child render({k_farm, "render", f.scene, "-o", f.path("farm.png"), "--workers", "2", "--threads", "1",
                              "--no-journal", "--block", "8", "--spp", "50000", "--http", "127.0.0.1:0"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("live view: http://", 30));
  const std::string url = url_in(render.log());
  REQUIRE(!url.empty());
  // Both workers, not the first to join: a loaded machine once dumped the page with one row.
  REQUIRE(render.wait_for_log("'local-1' joined", 30));
  REQUIRE(render.wait_for_log("'local-2' joined", 30));
  // --dump-dom prints the DOM once the page's scripts have run for the virtual time budget
  // (10 s: with 4 s a loaded CI machine once dumped the page before its first image arrived):
  // the page marks what it drew (data-ready, the image's decoded size, one row per worker).
  const std::string dom = f.path("dom.html");
  const int code = test_process::run({chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--user-data-dir=" + f.path("profile"), "--virtual-time-budget=10000",
                                      "--dump-dom", url},
                                     dom, 90);
  const std::string text = launched_workers::read_text(dom);
  REQUIRE_MESSAGE(code == 0, text);
  CHECK(text.find("data-ready=\"1\"") != std::string::npos);
  CHECK(text.find("data-loaded=\"61x45\"") != std::string::npos);  // the image decoded at the job's size
  CHECK(text.find("data-finished=\"0\"") != std::string::npos);    // while rendering
  CHECK(std::regex_search(text, std::regex("<tr class=\"worker\" data-id=\"[0-9]+\"><td>[0-9]+</td><td><span[^>]*></span>local-1<")));
  CHECK(std::regex_search(text, std::regex("<tr class=\"worker\" data-id=\"[0-9]+\"><td>[0-9]+</td><td><span[^>]*></span>local-2<")));
  render.kill(SIGTERM);
  render.wait(30);
}

TEST_CASE("live: 200 idle connections to the live view do not stall the render") {
  Fixture f("live_flood", 200);
  const std::string out = f.path("farm.png");
  test_process::Child render({k_farm, "render", f.scene, "-o", out, "--workers", "2", "--threads", "1", "--no-journal",
                              "--block", "8", "--http", "127.0.0.1:0"},
                             f.path("render.log"));
  REQUIRE(render.wait_for_log("live view: http://", 30));
  const int port = port_of(url_in(render.log()));
  // Each connects and never sends a byte: every serving thread and the queue fill up, then the
  // accepting thread waits, and later connections sit in the kernel's backlog.
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);  // non-blocking: EINPROGRESS is fine
    idle.push_back(fd);
  }
  const int code = render.wait(120);
  for (int fd : idle) ::close(fd);
  CHECK_MESSAGE(code == 0, render.log());
  CHECK(test_process::same_file(out, f.reference));
}

TEST_CASE("live: the image's PNG is encoded once per change, shared within its maximum age") {
  LiveImage image(8, 4);
  const uint8_t white[3] = {255, 255, 255};
  const LiveImage::Png first = image.png();
  CHECK(image.png() == first);          // unchanged: the same bytes, not a second encode
  CHECK(image.png(60.0) == first);
  image.place_rgb8(0, 0, 1, 1, white);
  CHECK(image.version() == 1);
  CHECK(image.png(60.0) == first);      // changed, but the last encode is younger than 60 s
  const LiveImage::Png second = image.png(0.0);  // max age 0: the image as it is now
  CHECK(second != first);
  CHECK(*second != *first);
  CHECK(image.png(0.0) == second);
}

TEST_SUITE_END();
