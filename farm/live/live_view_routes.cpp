#include "live/live_view_routes.h"

namespace farm {
namespace {

const char k_page[] =
#include "live_page.inc"
    ;

// Serves `png` (or the reason it could not be made).
void send_png(httplib::Response& res, const std::function<LiveImage::Png()>& png) {
  try {
    const LiveImage::Png bytes = png();
    res.set_content(reinterpret_cast<const char*>(bytes->data()), bytes->size(), "image/png");
  } catch (const std::exception& e) {
    res.status = 500;
    res.set_content(std::string(e.what()) + "\n", "text/plain");
  }
}

}  // namespace

void add_live_view_routes(httplib::Server& s, const std::string& prefix, LiveViewFinder find) {
  // Each handler finds its view first; a view that is gone (a job no longer shown) is a 404.
  auto with_view = [find](std::function<void(const LiveView&, httplib::Response&)> serve) {
    return [find, serve](const httplib::Request& req, httplib::Response& res) {
      std::shared_ptr<const LiveView> view = find(req);
      if (!view) {
        res.status = 404;
        res.set_content("no live view here (the job is not shown: it has not started, or ended long ago)\n", "text/plain");
        return;
      }
      serve(*view, res);
    };
  };
  s.Get(prefix + "/", with_view([](const LiveView&, httplib::Response& res) {
          res.set_header("Content-Security-Policy",
                         "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src 'self'");
          res.set_content(k_page, sizeof k_page - 1, "text/html; charset=utf-8");
        }));
  s.Get(prefix + "/api/status", with_view([](const LiveView& v, httplib::Response& res) {
          res.set_content(v.texts()->json, "application/json");
        }));
  s.Get(prefix + "/metrics", with_view([](const LiveView& v, httplib::Response& res) {
          res.set_content(v.texts()->prometheus, "text/plain; version=0.0.4; charset=utf-8");
        }));
  s.Get(prefix + "/image.png", with_view([](const LiveView& v, httplib::Response& res) {
          send_png(res, [&v] { return v.png(); });
        }));
  s.Get(prefix + "/thumb.png", with_view([](const LiveView& v, httplib::Response& res) {
          send_png(res, [&v] { return v.thumbnail_png(k_thumbnail_side); });
        }));
}

}  // namespace farm
