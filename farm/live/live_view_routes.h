// The routes of a live view (live_view.h), for the servers that show one: the live view's own
// (live_server.h: prefix "") and the farm service's page (queue_server.h: one per job, prefix
// /jobs/ID). Internal to farm/live.
//   PREFIX/            the page (self-contained: no script or style from elsewhere)
//   PREFIX/api/status  the status as JSON (docs/live.md)
//   PREFIX/metrics     Prometheus text
//   PREFIX/image.png   the image so far (8-bit sRGB, blocks not yet done black)
//   PREFIX/thumb.png   the same, at most k_thumbnail_side pixels on its longer side
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <string>

#include "live/live_view.h"

namespace farm {

inline constexpr int k_thumbnail_side = 160;

// `prefix`: a regular expression the paths start with (its groups are the request's first
// matches); `find`: the view a request names, or nullptr (then 404).
using LiveViewFinder = std::function<std::shared_ptr<const LiveView>(const httplib::Request&)>;
void add_live_view_routes(httplib::Server& server, const std::string& prefix, LiveViewFinder find);

}  // namespace farm
