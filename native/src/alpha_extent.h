// SPDX-License-Identifier: MIT
// The two boxes the composite's last steps take from the finished alpha, in one scan of it: the
// semi-transparent pixels' (0 < alpha < 255: where the foreground colour is estimated) and the
// subject's (alpha at or above a threshold: the box the caller crops to). Each was a pass over the
// whole image of its own (12 MP: ~5 ms each on one core); rows of sure background, most of a photo's,
// are now read once. Pure C++, no N-API.
#pragma once

#include <cstdint>

namespace cutout {

// [x0, x1) × [y0, y1); empty when y1 <= y0 (then x0 = w, y0 = h, x1 = y1 = 0).
struct AlphaRect {
  int x0, y0, x1, y1;
  bool empty() const { return y1 <= y0; }
};

struct AlphaExtents {
  AlphaRect partial;  // 0 < alpha < 255
  AlphaRect subject;  // alpha >= the threshold
};

// In bands of rows on `threads` threads (min/max: the same boxes whatever the bands). subject_threshold
// is at least 1: the subject is looked for only among pixels with some alpha.
AlphaExtents ScanAlphaExtents(const uint8_t* rgba, int w, int h, uint8_t subject_threshold, int threads);

}  // namespace cutout
