#include "master/progress.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace farm {

void Progress::start(int64_t total_pixels) {
  m_tty = ::isatty(STDERR_FILENO) != 0;
  m_total = total_pixels > 0 ? total_pixels : 1;
}

void Progress::update(double now, int64_t done_pixels, uint64_t done_blocks, size_t outstanding, size_t workers,
                      size_t sitting_out, uint64_t rays) {
  const double interval = m_tty ? 0.2 : 5.0;
  if (now - m_last_print < interval) return;
  m_last_print = now;
  double fraction = static_cast<double>(done_pixels) / static_cast<double>(m_total);
  double eta = fraction > 0.01 ? now * (1 - fraction) / fraction : -1;
  double mrays = now > 0 ? static_cast<double>(rays) / now / 1e6 : 0;
  char eta_text[32];
  if (eta >= 0) std::snprintf(eta_text, sizeof eta_text, "%.0fs", eta);
  else std::snprintf(eta_text, sizeof eta_text, "?");
  char workers_text[64];
  if (sitting_out > 0) {
    std::snprintf(workers_text, sizeof workers_text, "%zu workers (%zu sitting out)", workers, sitting_out);
  } else {
    std::snprintf(workers_text, sizeof workers_text, "%zu workers", workers);
  }
  if (m_tty) {
    std::fprintf(stderr, "\r[%5.1f%%] %llu blocks done, %zu outstanding | %s | ETA %s | %.1f Mrays/s   ",
                 100 * fraction, static_cast<unsigned long long>(done_blocks), outstanding, workers_text, eta_text, mrays);
    std::fflush(stderr);
    m_printed = true;
  } else {
    spdlog::info("{:.1f}% done: {} blocks done, {} outstanding, {}, ETA {}, {:.1f} Mrays/s", 100 * fraction,
                 done_blocks, outstanding, workers_text, eta_text, mrays);
  }
}

void Progress::done(double) {
  if (m_tty && m_printed) std::fprintf(stderr, "\n");
}

}  // namespace farm
