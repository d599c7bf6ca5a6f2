// SPDX-License-Identifier: MIT
#include "alpha_extent.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "alpha_scan.h"
#include "parallel.h"

namespace cutout {
namespace {

void Include(AlphaRect& r, int y, int first, int last) {
  r.x0 = std::min(r.x0, first);
  r.x1 = std::max(r.x1, last + 1);
  r.y0 = std::min(r.y0, y);
  r.y1 = y + 1;
}

void Merge(AlphaRect& into, const AlphaRect& r) {
  if (r.empty()) return;
  into.x0 = std::min(into.x0, r.x0);
  into.x1 = std::max(into.x1, r.x1);
  into.y0 = std::min(into.y0, r.y0);
  into.y1 = std::max(into.y1, r.y1);
}

// Rows [ya, yb). Each row's pixels with any alpha are found first, from both ends (a row of sure
// background is read once, for both boxes); each box's ends are then looked for inside them.
AlphaExtents ScanRows(const uint8_t* rgba, int w, int h, int ya, int yb, uint8_t threshold) {
  AlphaExtents e{{w, h, 0, 0}, {w, h, 0, 0}};
  for (int y = ya; y < yb; ++y) {
    const uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    const int a = FirstAlphaIn(row, 0, w, 1, 255);
    if (a < 0) continue;
    const int end = LastAlphaIn(row, a, w, 1, 255) + 1;
    const int fs = FirstAlphaIn(row, a, end, threshold, 255);
    if (fs >= 0) Include(e.subject, y, fs, LastAlphaIn(row, fs, end, threshold, 255));
    const int fp = FirstAlphaIn(row, a, end, 1, 254);
    if (fp >= 0) Include(e.partial, y, fp, LastAlphaIn(row, fp, end, 1, 254));
  }
  return e;
}

}  // namespace

AlphaExtents ScanAlphaExtents(const uint8_t* rgba, int w, int h, uint8_t subject_threshold, int threads) {
  AlphaExtents all{{w, h, 0, 0}, {w, h, 0, 0}};
  if (!rgba || w <= 0 || h <= 0) return all;
  const int rows = BandRows(w), bands = (h + rows - 1) / rows;
  std::vector<AlphaExtents> per_band(bands, all);
  ParallelForEach(bands, ClampThreads(threads), [&](int, int item) {
    per_band[item] = ScanRows(rgba, w, h, item * rows, std::min(h, item * rows + rows), subject_threshold);
  });
  for (const AlphaExtents& e : per_band) {
    Merge(all.partial, e.partial);
    Merge(all.subject, e.subject);
  }
  return all;
}

}  // namespace cutout
