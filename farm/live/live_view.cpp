#include "live/live_view.h"

#include "live/live_format.h"

namespace farm {

namespace {
constexpr double k_image_max_age_seconds = 1.0;  // the pages ask once a second
}  // namespace

LiveView::LiveView(int width, int height) : m_image(width, height), m_status(std::make_shared<LiveStatus>()) {}

void LiveView::publish(LiveStatus status) {
  auto next = std::make_shared<const LiveStatus>(std::move(status));
  std::lock_guard<std::mutex> lock(m_mutex);
  m_status = std::move(next);
}

std::shared_ptr<const LiveStatus> LiveView::status() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_status;
}

std::shared_ptr<const LiveView::Texts> LiveView::texts() const {
  std::lock_guard<std::mutex> lock(m_texts_mutex);
  std::shared_ptr<const LiveStatus> now = status();
  if (!m_texts || m_texts->of != now)
    m_texts = std::make_shared<const Texts>(Texts{now, live_status_json(*now), live_prometheus_text(*now)});
  return m_texts;
}

LiveImage::Png LiveView::png() const { return m_image.png(status()->finished ? 0.0 : k_image_max_age_seconds); }

LiveImage::Png LiveView::thumbnail_png(int max_side) const {
  return m_image.thumbnail_png(max_side, status()->finished ? 0.0 : k_image_max_age_seconds);
}

}  // namespace farm
