// Progress of a farm run: a single rewritten line on a terminal, a log line every few
// seconds otherwise (so logs of batch jobs stay readable).
#pragma once

#include <cstddef>
#include <cstdint>

namespace farm {

class Progress {
 public:
  void start(int64_t total_pixels);
  // `sitting_out` of the `workers` are connected but cannot take part (shown, not counted as idle capacity).
  void update(double now, int64_t done_pixels, uint64_t done_blocks, size_t outstanding, size_t workers,
              size_t sitting_out, uint64_t rays);
  void done(double now);

 private:
  bool m_tty = false;
  int64_t m_total = 1;
  double m_last_print = -1e9;
  bool m_printed = false;
};

}  // namespace farm
