// The service page's thumbnails (LiveImage::thumbnail_png) and which jobs' live views it keeps
// (QueueServer::show/ended): each thumbnail pixel is the mean of the pixels it covers, the longer
// side is at most the size asked and never more than the image's; ended jobs' views go once
// k_ended_views later ones have ended.
#include <doctest/doctest.h>
#include <httplib.h>
#include <unistd.h>

#include <OpenImageIO/imageio.h>

#include <cstdio>
#include <string>
#include <vector>

#include "live/live_image.h"
#include "live/queue_server.h"

TEST_SUITE_BEGIN("unit");

using namespace farm;

namespace {

// A PNG's pixels as 8-bit RGB, through a file (as a browser would get it).
std::vector<uint8_t> decode(const LiveImage::Png& png, int& w, int& h) {
  char path[] = "/tmp/farm_thumb_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, png->data(), png->size()) == static_cast<ssize_t>(png->size()));
  ::close(fd);
  auto in = OIIO::ImageInput::open(path);
  REQUIRE(in);
  w = in->spec().width;
  h = in->spec().height;
  REQUIRE(in->spec().nchannels == 3);
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  REQUIRE(in->read_image(0, 0, 0, 3, OIIO::TypeDesc::UINT8, rgb.data()));
  in->close();
  std::remove(path);
  return rgb;
}

}  // namespace

TEST_CASE("live thumbnail: each pixel is the mean of the pixels it covers, the longer side at most the size asked") {
  LiveImage image(8, 4);
  // Left half: a 4x4 block of red 200 with one pixel of 0 (mean 187.5 -> 188); right half 40.
  std::vector<uint8_t> left(4 * 4 * 3, 0), right(4 * 4 * 3, 0);
  for (size_t i = 0; i < 16; ++i) {
    left[i * 3] = i == 5 ? 0 : 200;
    right[i * 3 + 1] = 40;
  }
  image.place_rgb8(0, 0, 4, 4, left.data());
  image.place_rgb8(4, 0, 4, 4, right.data());
  int w = 0, h = 0;
  std::vector<uint8_t> t = decode(image.thumbnail_png(2), w, h);
  REQUIRE(w == 2);
  REQUIRE(h == 1);
  CHECK(int(t[0]) == 188);  // (15 x 200 + 0) / 16 = 187.5, rounded
  CHECK(int(t[1]) == 0);
  CHECK(int(t[3]) == 0);
  CHECK(int(t[4]) == 40);
  // Never scaled up: asked for more than the image has, the thumbnail is the image.
  std::vector<uint8_t> whole = decode(image.thumbnail_png(100), w, h);
  CHECK(w == 8);
  CHECK(h == 4);
  CHECK(whole == decode(image.png(), w, h));
  // A tall image: its height is the longer side.
  LiveImage tall(3, 300);
  decode(tall.thumbnail_png(160), w, h);
  CHECK(w == 1);
  CHECK(h == 160);
}

TEST_CASE("live thumbnail: a new block shows in the next thumbnail once the cache may be renewed") {
  LiveImage image(4, 4);
  int w = 0, h = 0;
  CHECK(decode(image.thumbnail_png(2, 0), w, h)[0] == 0);
  std::vector<uint8_t> white(4 * 4 * 3, 255);
  image.place_rgb8(0, 0, 4, 4, white.data());
  CHECK(decode(image.thumbnail_png(2, 0), w, h)[0] == 255);  // max age 0: always the image as it is
}

TEST_CASE("queue page: it keeps the live views of running jobs and of the last jobs that ended") {
  LiveServerOptions o;
  o.port = 0;
  QueueServer page(o);
  for (int64_t id = 1; id <= 20; ++id) page.show(id, std::make_shared<LiveView>(4, 4));
  CHECK(page.shows(1));
  CHECK_FALSE(page.shows(21));
  page.ended(21);  // never shown: nothing to keep
  for (int64_t id = 1; id <= 17; ++id) page.ended(id);
  // 17 ended, 16 kept: the first to end is gone, the later ones and the running ones stay.
  CHECK_FALSE(page.shows(1));
  for (int64_t id = 2; id <= 20; ++id) CHECK(page.shows(id));
  // Served at /jobs/ID/ while kept, 404 once gone.
  httplib::Client client("127.0.0.1", page.port());
  auto kept = client.Get("/jobs/2/thumb.png");
  REQUIRE(kept);
  CHECK(kept->status == 200);
  CHECK(kept->get_header_value("Content-Type") == "image/png");
  auto gone = client.Get("/jobs/1/api/status");
  REQUIRE(gone);
  CHECK(gone->status == 404);
  auto bare = client.Get("/jobs/2");
  REQUIRE(bare);
  CHECK(bare->status == 303);
  CHECK(bare->get_header_value("Location") == "/jobs/2/");
}

TEST_SUITE_END();
