// What a live view shows of one job: its image so far and the status its loop last published.
// The job's loop writes (live image, publish); web servers read: the live view's own server
// (live_server.h) serves one, the farm service's page (queue_server.h) one per job it hosts.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "live/live_image.h"
#include "live/live_status.h"

namespace farm {

class LiveView {
 public:
  LiveView(int width, int height);
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  void publish(LiveStatus status);
  LiveImage& image() { return m_image; }
  const LiveImage& image() const { return m_image; }
  std::shared_ptr<const LiveStatus> status() const;

  // The status as text, formatted once per published status however many clients ask (the
  // JSON holds every accepted block's outline: tens of kB late in a render).
  struct Texts {
    std::shared_ptr<const LiveStatus> of;
    std::string json, prometheus;
  };
  std::shared_ptr<const Texts> texts() const;

  // The image so far as PNG: while the job runs up to a second old (pages ask once a second),
  // once it is finished exactly the final image.
  LiveImage::Png png() const;
  // The same, scaled down to at most `max_side` pixels on its longer side (a queue's thumbnail).
  LiveImage::Png thumbnail_png(int max_side) const;

 private:
  LiveImage m_image;
  mutable std::mutex m_mutex;  // m_status
  std::shared_ptr<const LiveStatus> m_status;
  mutable std::mutex m_texts_mutex;  // held through a formatting
  mutable std::shared_ptr<const Texts> m_texts;
};

}  // namespace farm
