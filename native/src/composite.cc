// SPDX-License-Identifier: MIT
#include "composite.h"

#include <algorithm>
#include <cstring>

#include "foreground.h"
#include "matting.h"
#include "refine.h"

namespace cutout {

namespace {
inline uint8_t Div255(uint32_t v) { return static_cast<uint8_t>((v + 128 + ((v + 128) >> 8)) >> 8); }

void ZeroTransparentColour(uint8_t* rgba, size_t pixels) {
  // Hidden colour only costs PNG bytes and encode time.
  for (size_t i = 0; i < pixels; i++) {
    uint8_t* p = rgba + i * 4;
    if (p[3] == 0) p[0] = p[1] = p[2] = 0;
  }
}

void ApplyRoi(uint8_t* rgba, int w, int h, const CompositeParams& p) {
  if (p.roi_x2 <= p.roi_x1 || p.roi_y2 <= p.roi_y1) return;
  const int x1 = std::clamp(p.roi_x1, 0, w), x2 = std::clamp(p.roi_x2, 0, w);
  const int y1 = std::clamp(p.roi_y1, 0, h), y2 = std::clamp(p.roi_y2, 0, h);
  for (int y = 0; y < h; y++) {
    uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    const bool inside_row = y >= y1 && y < y2;
    for (int x = 0; x < w; x++) {
      if (!inside_row || x < x1 || x >= x2) row[x * 4 + 3] = 0;
    }
  }
}
}  // namespace

Box ForegroundBox(const uint8_t* rgba, int w, int h) {
  int minx = w, miny = h, maxx = -1, maxy = -1;
  for (int y = 0; y < h; y++) {
    const uint8_t* row = rgba + static_cast<size_t>(y) * w * 4;
    int first = -1, last = -1;
    for (int x = 0; x < w; x++) {
      if (row[x * 4 + 3] >= kForegroundThreshold) {
        if (first < 0) first = x;
        last = x;
      }
    }
    if (first >= 0) {
      minx = std::min(minx, first);
      maxx = std::max(maxx, last);
      miny = std::min(miny, y);
      maxy = y;
    }
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
  UpsampleMatteBilinear(mask, mw, mh, rgba + 3, w, h, 4, stride);
  if (p.refine) {
    RefineMatteGuided(rgba, w, h, mask, mw, mh, p.refine_params);
    if (p.matting) MatteByColourModel(rgba, w, h, mw, mh, p.matting_params);
  }
  ApplyRoi(rgba, w, h, p);
  if (p.decontaminate) {
    EstimateForeground(rgba, w, h, ForegroundParams{});
  } else {
    ZeroTransparentColour(rgba, static_cast<size_t>(w) * h);
  }
  return ForegroundBox(rgba, w, h);
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
