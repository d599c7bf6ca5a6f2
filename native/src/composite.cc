// SPDX-License-Identifier: MIT
#include "composite.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "alpha_scan.h"
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

// Box of alpha >= kForegroundThreshold in rows [ya, yb); none: maxx = maxy = -1.
struct Span {
  int minx, miny, maxx, maxy;
};

bool AnyForeground(const uint8_t* px, int n) { return AnyAlphaIn(px, n, kForegroundThreshold, 255); }

// Pixels per vector test in the span scans: most of a row is surely background (or surely
// foreground), so the scans step over it a group at a time.
constexpr int kSpanGroup = 16;

// First x in [0, w) with alpha >= kForegroundThreshold, or -1.
int FirstForeground(const uint8_t* row, int w) {
  int x = 0;
  while (x + kSpanGroup <= w && !AnyForeground(row + 4 * static_cast<size_t>(x), kSpanGroup)) x += kSpanGroup;
  for (; x < w; x++)
    if (row[4 * x + 3] >= kForegroundThreshold) return x;
  return -1;
}

// Last x in [from, w) with alpha >= kForegroundThreshold (row[from] is one).
int LastForeground(const uint8_t* row, int w, int from) {
  int x = w;
  while (x - kSpanGroup > from && !AnyForeground(row + 4 * static_cast<size_t>(x - kSpanGroup), kSpanGroup)) x -= kSpanGroup;
  while (row[4 * (x - 1) + 3] < kForegroundThreshold) x--;
  return x - 1;
}

Span ForegroundSpan(const uint8_t* rgba, int w, int h, int ya, int yb) {
  Span s{w, h, -1, -1};
  for (int y = ya; y < yb; y++) {
    const uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    const int first = FirstForeground(row, w);
    const int last = first >= 0 ? LastForeground(row, w, first) : -1;
    if (first >= 0) {
      s.minx = std::min(s.minx, first);
      s.maxx = std::max(s.maxx, last);
      s.miny = std::min(s.miny, y);
      s.maxy = y;
    }
  }
  return s;
}

double MsSince(std::chrono::steady_clock::time_point& t) {
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}
}  // namespace

Box ForegroundBox(const uint8_t* rgba, int w, int h, int threads) {
  const int rows = BandRows(w), bands = (h + rows - 1) / rows;
  std::vector<Span> spans(std::max(bands, 0), Span{w, h, -1, -1});
  ParallelForEach(bands, threads, [&](int, int item) {
    spans[item] = ForegroundSpan(rgba, w, h, item * rows, std::min(h, item * rows + rows));
  });
  int minx = w, miny = h, maxx = -1, maxy = -1;
  for (const Span& s : spans) {  // min/max: the same box whatever the bands
    minx = std::min(minx, s.minx);
    miny = std::min(miny, s.miny);
    maxx = std::max(maxx, s.maxx);
    maxy = std::max(maxy, s.maxy);
  }
  Box box;
  if (maxx >= 0) {
    box.left = minx;
    box.top = miny;
    box.width = maxx - minx + 1;
    box.height = maxy - miny + 1;
  }
  return box;
}

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
  if (p.decontaminate) {
    EstimateForeground(rgba, w, h, p.foreground_params, threads);
  } else {
    ForRowBands(w, h, threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) ZeroTransparentRow(rgba + static_cast<size_t>(y) * stride, w);
    });
  }
  times.foreground = MsSince(t);
  const Box box = ForegroundBox(rgba, w, h, threads);
  times.box = MsSince(t);
  if (p.timings) *p.timings = times;
  return box;
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
