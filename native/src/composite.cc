// SPDX-License-Identifier: MIT
#include "composite.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "alpha_extent.h"
#include "foreground.h"
#include "grid.h"
#include "matting.h"
#include "parallel.h"
#include "refine.h"

namespace cutout {

namespace {
inline uint8_t Div255(uint32_t v) { return static_cast<uint8_t>((v + 128 + ((v + 128) >> 8)) >> 8); }

// Row bands of about 256K pixels, handed to `threads` workers: fn(y0, y1).
template <class Fn>
void ForRowBands(int w, int h, int threads, Fn&& fn) {
  const int rows = BandRows(w);
  ParallelForEach((h + rows - 1) / rows, threads,
                  [&](int, int item) { fn(item * rows, std::min(h, item * rows + rows)); });
}

// Rows [ya, yb): alpha 0 outside [x1, x2) × [y1, y2).
void RoiRows(uint8_t* rgba, int w, int x1, int x2, int y1, int y2, int ya, int yb) {
  for (int y = ya; y < yb; y++) {
    uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    const bool inside_row = y >= y1 && y < y2;
    for (int x = 0; x < w; x++) {
      if (!inside_row || x < x1 || x >= x2) row[x * 4 + 3] = 0;
    }
  }
}

void ApplyRoi(uint8_t* rgba, int w, int h, const CompositeParams& p, int threads) {
  if (p.roi_x2 <= p.roi_x1 || p.roi_y2 <= p.roi_y1) return;
  const int x1 = std::clamp(p.roi_x1, 0, w), x2 = std::clamp(p.roi_x2, 0, w);
  const int y1 = std::clamp(p.roi_y1, 0, h), y2 = std::clamp(p.roi_y2, 0, h);
  ForRowBands(w, h, threads, [&](int ya, int yb) { RoiRows(rgba, w, x1, x2, y1, y2, ya, yb); });
}

Box SubjectBox(const AlphaRect& r) {
  Box box;
  if (!r.empty()) {
    box.left = r.x0;
    box.top = r.y0;
    box.width = r.x1 - r.x0;
    box.height = r.y1 - r.y0;
  }
  return box;
}

double MsSince(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}
}  // namespace

Box CompositeAlpha(uint8_t* rgba, int w, int h, const float* mask, int mw, int mh, const CompositeParams& p) {
  const size_t stride = static_cast<size_t>(w) * 4;
  const int threads = static_cast<int64_t>(w) * h >= kParallelMinPixels ? ClampThreads(p.threads) : 1;
  CompositeTimings times;
  auto t = std::chrono::steady_clock::now();
  UpsampleMatteBilinear(mask, mw, mh, rgba + 3, w, h, 4, stride, threads);
  times.upsample = MsSince(t);
  if (p.refine) {
    RefineMatteGuided(rgba, w, h, mask, mw, mh, p.refine_params, threads);
    times.refine = MsSince(t);
    if (p.matting) MatteByColourModel(rgba, w, h, mw, mh, p.matting_params, threads);
    times.matting = MsSince(t);
  }
  ApplyRoi(rgba, w, h, p, threads);
  times.roi = MsSince(t);
  // The alpha is final from here (the foreground step writes colour only): both boxes in one scan.
  const AlphaExtents extents = ScanAlphaExtents(rgba, w, h, kForegroundThreshold, threads);
  times.box = MsSince(t);
  if (p.decontaminate) {
    EstimateForeground(rgba, w, h, extents.partial, p.foreground_params, threads);
  } else {
    ForRowBands(w, h, threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) ZeroTransparentRow(rgba + static_cast<size_t>(y) * stride, w);
    });
  }
  times.foreground = MsSince(t);
  if (p.timings) *p.timings = times;
  return SubjectBox(extents.subject);
}

void FlattenOnColor(uint8_t* rgba, size_t pixels, uint8_t r, uint8_t g, uint8_t b, uint8_t a) {
  const uint8_t bg[3] = {r, g, b};
  for (size_t i = 0; i < pixels; i++) {
    uint8_t* p = rgba + i * 4;
    const uint32_t fa = p[3];
    // Porter-Duff over with straight alpha: out_a = fa + ba(1-fa); out_c = (fc*fa + bc*ba*(1-fa)) / out_a.
    const uint32_t ba_inv = Div255(static_cast<uint32_t>(a) * (255 - fa));
    const uint32_t oa = fa + ba_inv;
    if (oa == 0) {
      p[0] = p[1] = p[2] = p[3] = 0;
      continue;
    }
    for (int c = 0; c < 3; c++) p[c] = static_cast<uint8_t>((p[c] * fa + bg[c] * ba_inv + oa / 2) / oa);
    p[3] = static_cast<uint8_t>(oa);
  }
}

void BlendOver(uint8_t* rgba, const uint8_t* bg, size_t pixels) {
  for (size_t i = 0; i < pixels; i++) {
    uint8_t* p = rgba + i * 4;
    const uint8_t* q = bg + i * 4;
    const uint32_t fa = p[3];
    const uint32_t ba_inv = Div255(static_cast<uint32_t>(q[3]) * (255 - fa));
    const uint32_t oa = fa + ba_inv;
    if (oa == 0) {
      p[0] = p[1] = p[2] = p[3] = 0;
      continue;
    }
    for (int c = 0; c < 3; c++) p[c] = static_cast<uint8_t>((p[c] * fa + q[c] * ba_inv + oa / 2) / oa);
    p[3] = static_cast<uint8_t>(oa);
  }
}

void ExtractAlpha(const uint8_t* rgba, size_t pixels, uint8_t* dst) {
  for (size_t i = 0; i < pixels; i++) dst[i] = rgba[i * 4 + 3];
}

}  // namespace cutout
