// SPDX-License-Identifier: MIT
#include "shadow_grid.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace cutout {

float ShadowGrid::Sample(float x, float y) const {
  x = std::clamp(x, 0.0f, static_cast<float>(w - 1));
  y = std::clamp(y, 0.0f, static_cast<float>(h - 1));
  const int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  const int x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
  const float fx = x - static_cast<float>(x0), fy = y - static_cast<float>(y0);
  const float top = at(x0, y0) + (at(x1, y0) - at(x0, y0)) * fx;
  const float bottom = at(x0, y1) + (at(x1, y1) - at(x0, y1)) * fx;
  return top + (bottom - top) * fy;
}

ShadowGrid EmptyShadowGrid(int w, int h) {
  const int f = std::max(1, (std::max(w, h) + kShadowGridMaxSide - 1) / kShadowGridMaxSide);
  return ShadowGrid((w + f - 1) / f, (h + f - 1) / f, f);
}

ShadowGrid DownscaleAlpha(const uint8_t* rgba, int w, int h, const AlphaRect& box) {
  ShadowGrid g = EmptyShadowGrid(w, h);
  if (box.empty()) return g;
  const int f = g.f;
  // Sums of alpha per cell, row by row of pixels; a cell's columns are summed in one run.
  std::vector<uint32_t> sums(static_cast<size_t>(g.w), 0);
  const int gx0 = box.x0 / f, gx1 = (box.x1 - 1) / f + 1;
  for (int gy = box.y0 / f; gy <= (box.y1 - 1) / f; ++gy) {
    std::fill(sums.begin() + gx0, sums.begin() + gx1, 0u);
    const int ya = std::max(gy * f, box.y0), yb = std::min({gy * f + f, box.y1, h});
    for (int y = ya; y < yb; ++y) {
      const uint8_t* row = rgba + static_cast<size_t>(y) * w * 4 + 3;
      for (int gx = gx0; gx < gx1; ++gx) {
        const int xa = std::max(gx * f, box.x0), xb = std::min(gx * f + f, box.x1);
        uint32_t s = 0;
        for (int x = xa; x < xb; ++x) s += row[4 * static_cast<size_t>(x)];
        sums[gx] += s;
      }
    }
    const int cell_h = std::min(gy * f + f, h) - gy * f;
    for (int gx = gx0; gx < gx1; ++gx) {
      const int cell_w = std::min(gx * f + f, w) - gx * f;
      g.at(gx, gy) = static_cast<float>(sums[gx]) / (255.0f * static_cast<float>(cell_w * cell_h));
    }
  }
  return g;
}

namespace {

// Radii of the three boxes whose sequence has variance sigma² (widths wl and wl + 2, the count of
// each chosen so that the variances add up; the usual "boxes for Gauss" construction).
void BoxRadii(float sigma, int radii[3]) {
  const float ideal = std::sqrt(12.0f * sigma * sigma / 3.0f + 1.0f);
  int wl = static_cast<int>(std::floor(ideal));
  if (wl % 2 == 0) --wl;
  const int wu = wl + 2;
  const float m = (12.0f * sigma * sigma - 3.0f * wl * wl - 12.0f * wl - 9.0f) / (-4.0f * wl - 4.0f);
  const int small = static_cast<int>(std::lround(m));
  for (int i = 0; i < 3; ++i) radii[i] = ((i < small ? wl : wu) - 1) / 2;
}

// One box of radius r along n values at `stride`, edges repeated; `tmp` holds a copy of the line.
void BoxLine(float* p, int n, ptrdiff_t stride, int r, std::vector<float>& tmp) {
  tmp.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) tmp[i] = p[i * stride];
  const float inv = 1.0f / static_cast<float>(2 * r + 1);
  float sum = static_cast<float>(r + 1) * tmp[0];
  for (int j = 1; j <= r; ++j) sum += tmp[std::min(j, n - 1)];
  for (int i = 0; i < n; ++i) {
    p[i * stride] = sum * inv;
    sum += tmp[std::min(i + r + 1, n - 1)] - tmp[std::max(i - r, 0)];
  }
}

}  // namespace

void BlurGrid(ShadowGrid& g, float sigma) {
  if (!(sigma >= 0.5f) || g.w == 0 || g.h == 0) return;
  int radii[3];
  BoxRadii(sigma, radii);
  std::vector<float> tmp;
  for (int r : radii) {
    if (r <= 0) continue;
    for (int y = 0; y < g.h; ++y) BoxLine(&g.at(0, y), g.w, 1, r, tmp);
    for (int x = 0; x < g.w; ++x) BoxLine(&g.at(x, 0), g.h, g.w, r, tmp);
  }
}

}  // namespace cutout
