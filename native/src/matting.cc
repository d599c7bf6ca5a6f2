// SPDX-License-Identifier: MIT
#include "matting.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "grid.h"

namespace cutout {
namespace {

// Per cell of the colour planes: Σf·r, Σf·g, Σf·b, Σf (sure foreground), then the same for background.
constexpr int kCh = 8;

// Grid rows averaged per call of AreaAverage (bounds that buffer to 16 rows of cells).
constexpr int kRowsPerPass = 16;

// Box blur of radius r, in place, on a kCh-channel interleaved w×h plane: borders clamped (edge cells
// repeat), always normalised by the full window. Horizontal pass through one row buffer; the vertical
// pass keeps the last r+1 original rows in a ring so it can overwrite rows it has passed.
void BoxBlurInPlace(float* a, int w, int h, int r, std::vector<float>& scratch) {
  const size_t n = static_cast<size_t>(w) * kCh;
  const float inv = 1.f / (2 * r + 1);
  scratch.resize(n * (r + 3));
  float* __restrict row = scratch.data();
  float* __restrict col = row + n;
  float* ring = col + n;  // r+1 rows
  for (int y = 0; y < h; ++y) {
    float* __restrict d = a + static_cast<size_t>(y) * n;
    std::memcpy(row, d, n * sizeof(float));
    float s[kCh] = {};
    for (int x = -r; x < r; ++x) {
      const int xx = std::clamp(x, 0, w - 1);
      for (int c = 0; c < kCh; ++c) s[c] += row[xx * kCh + c];
    }
    for (int x = 0; x < w; ++x) {
      const float* ad = &row[std::min(x + r, w - 1) * kCh];
      const float* rm = &row[std::max(x - r, 0) * kCh];
      for (int c = 0; c < kCh; ++c) {
        s[c] += ad[c];
        d[x * kCh + c] = s[c] * inv;
        s[c] -= rm[c];
      }
    }
  }
  std::fill(col, col + n, 0.f);
  for (int y = -r; y < r; ++y) {
    const float* __restrict s = a + static_cast<size_t>(std::clamp(y, 0, h - 1)) * n;
    for (size_t k = 0; k < n; ++k) col[k] += s[k];
  }
  for (int y = 0; y < h; ++y) {
    float* __restrict d = a + static_cast<size_t>(y) * n;
    float* __restrict keep = ring + static_cast<size_t>(y % (r + 1)) * n;
    std::memcpy(keep, d, n * sizeof(float));
    // Row max(y-r, 0) was saved to the ring at most r rows ago.
    // Row min(y+r, h-1) >= y: not yet overwritten (or row y itself, just saved).
    const int ya = std::min(y + r, h - 1);
    const float* __restrict ad = ya > y ? a + static_cast<size_t>(ya) * n : keep;
    const float* __restrict rm = ring + static_cast<size_t>(std::max(y - r, 0) % (r + 1)) * n;
    for (size_t k = 0; k < n; ++k) {
      col[k] += ad[k];
      d[k] = col[k] * inv;
      col[k] -= rm[k];
    }
  }
}

// Three box passes approximate a Gaussian of this σ: r = round((sqrt(4σ² + 1) - 1) / 2).
void GaussInPlace(float* a, int w, int h, float sigma, std::vector<float>& scratch) {
  const int r = std::max(1, static_cast<int>(std::lround((std::sqrt(4.0 * sigma * sigma + 1.0) - 1.0) / 2.0)));
  for (int k = 0; k < 3; ++k) BoxBlurInPlace(a, w, h, r, scratch);
}

// Mean over f×f blocks (partial blocks at the right/bottom edges averaged over the cells they have).
std::vector<float> Downscale(const std::vector<float>& a, int w, int h, int f, int& ow, int& oh) {
  ow = (w + f - 1) / f;
  oh = (h + f - 1) / f;
  std::vector<float> o(static_cast<size_t>(ow) * oh * kCh, 0.f);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* d = &o[(static_cast<size_t>(y / f) * ow + x / f) * kCh];
      const float* s = &a[(static_cast<size_t>(y) * w + x) * kCh];
      for (int c = 0; c < kCh; ++c) d[c] += s[c];
    }
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      const int cnt = (std::min(w, (x + 1) * f) - x * f) * (std::min(h, (y + 1) * f) - y * f);
      float* d = &o[(static_cast<size_t>(y) * ow + x) * kCh];
      for (int c = 0; c < kCh; ++c) d[c] /= cnt;
    }
  return o;
}

// Bilinear sample (centre-aligned) of a level L (lw×lh) whose cells are s grid cells wide, at grid
// cell (gx, gy).
void Sample(const float* L, int lw, int lh, float gx, float gy, float s, float* out) {
  float x = (gx + 0.5f) / s - 0.5f, y = (gy + 0.5f) / s - 0.5f;
  x = std::clamp(x, 0.f, static_cast<float>(lw - 1));
  y = std::clamp(y, 0.f, static_cast<float>(lh - 1));
  const int x0 = std::min(static_cast<int>(x), std::max(lw - 2, 0));
  const int y0 = std::min(static_cast<int>(y), std::max(lh - 2, 0));
  const int x1 = std::min(x0 + 1, lw - 1), y1 = std::min(y0 + 1, lh - 1);
  const float fx = lw > 1 ? x - x0 : 0.f, fy = lh > 1 ? y - y0 : 0.f;
  const float* a = &L[(static_cast<size_t>(y0) * lw + x0) * kCh];
  const float* b = &L[(static_cast<size_t>(y0) * lw + x1) * kCh];
  const float* c = &L[(static_cast<size_t>(y1) * lw + x0) * kCh];
  const float* d = &L[(static_cast<size_t>(y1) * lw + x1) * kCh];
  for (int k = 0; k < kCh; ++k) out[k] = (a[k] * (1 - fx) + b[k] * fx) * (1 - fy) + (c[k] * (1 - fx) + d[k] * fx) * fy;
}

// Per band cell: the local colour model, ready for the per-pixel projection.
struct CellModel {
  float br, bg, bb;  // background colour, 0..1
  float dr, dg, db;  // F - B
  float inv;         // 1 / |F - B|²
  float conf;        // weight of the colour estimate, 0 = keep the network's alpha
};

}  // namespace

void MatteByColourModel(uint8_t* rgba, int w, int h, int lw, int lh, const MattingParams& p) {
  if (!rgba || w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return;
  const float lo = p.sure_bg, hi = p.sure_fg;
  const int gw = std::min(lw, w), gh = std::min(lh, h);
  const size_t gn = static_cast<size_t>(gw) * gh;
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const std::vector<int> cx = CellEdges(w, gw), cy = CellEdges(h, gh);

  // 1. One pass over the photo: mean colour and alpha per grid cell (AreaAverage), classified at once.
  // Uncertain cells are marked; sure ones add their colour to the half-size plane L0 (f·rgb, f, b·rgb,
  // b per half cell).
  const int w0 = (gw + 1) / 2, h0 = (gh + 1) / 2;
  std::vector<float> L0(static_cast<size_t>(w0) * h0 * kCh, 0.f);
  std::vector<uint8_t> band(gn);
  bool any_uncertain = false;
  {
    // kRowsPerPass grid rows at a time: the full grid is never stored.
    std::vector<float> cells(static_cast<size_t>(gw) * kRowsPerPass * 4);
    for (int j0 = 0; j0 < gh; j0 += kRowsPerPass) {
      const int j1 = std::min(gh, j0 + kRowsPerPass);
      AreaAverage(rgba, w, cx, cy, 0, gw, j0, j1, cells.data(), gw);
      for (int j = j0; j < j1; ++j) {
        const float* c = &cells[static_cast<size_t>(j - j0) * gw * 4];
        uint8_t* brow = &band[static_cast<size_t>(j) * gw];
        float* half = &L0[static_cast<size_t>(j / 2) * w0 * kCh];
        for (int i = 0; i < gw; ++i) {
          const float a = c[4 * i + 3];
          const bool uncertain = a > lo && a < hi;
          brow[i] = uncertain;
          any_uncertain |= uncertain;
          if (uncertain) continue;
          float* o = &half[(i / 2) * kCh + (a >= hi ? 0 : 4)];  // a >= hi: sure foreground, else background
          o[0] += c[4 * i];
          o[1] += c[4 * i + 1];
          o[2] += c[4 * i + 2];
          o[3] += 1.f;
        }
      }
    }
  }
  if (!any_uncertain) return;
  for (int y = 0; y < h0; ++y)
    for (int x = 0; x < w0; ++x) {
      const int cnt = (std::min(gw, 2 * x + 2) - 2 * x) * (std::min(gh, 2 * y + 2) - 2 * y);
      float* d = &L0[(static_cast<size_t>(y) * w0 + x) * kCh];
      for (int c = 0; c < kCh; ++c) d[c] /= cnt;
    }

  // 2. Coarser levels (1/8 and 1/32 of the grid), then blur every level at the same σ in its own cells.
  int w1, h1, w2, h2;
  std::vector<float> L1 = Downscale(L0, w0, h0, 4, w1, h1);
  std::vector<float> L2 = Downscale(L1, w1, h1, 4, w2, h2);
  {
    std::vector<float> scratch;
    GaussInPlace(L0.data(), w0, h0, p.sigma, scratch);
    GaussInPlace(L1.data(), w1, h1, p.sigma, scratch);
    GaussInPlace(L2.data(), w2, h2, p.sigma, scratch);
  }

  // 3. The band: uncertain cells grown by band_dilate.
  DilateOr(band, gw, gh, std::min(std::max(p.band_dilate, 0), std::max(gw, gh)));

  // 4. Row by row of grid cells: the colour model of each band cell, then the full-res pixels it covers.
  const float minw = p.min_support;
  const float crange = std::max(p.confidence_range, 1e-6f);
  std::vector<CellModel> models(gw);
  std::vector<uint8_t> use(gw);
  for (int j = 0; j < gh; ++j) {
    const uint8_t* brow = &band[static_cast<size_t>(j) * gw];
    bool any = false;
    for (int i = 0; i < gw; ++i) {
      use[i] = 0;
      if (!brow[i]) continue;
      float s0[kCh], s1[kCh], s2[kCh];
      Sample(L0.data(), w0, h0, i, j, 2.f, s0);
      Sample(L1.data(), w1, h1, i, j, 8.f, s1);
      Sample(L2.data(), w2, h2, i, j, 32.f, s2);
      float fb[kCh];
      bool ok = true;
      for (int part = 0; part < 2; ++part) {
        const int b = part * 4;
        const float* pick = nullptr;
        if (s0[b + 3] >= minw) {
          pick = s0;
        } else if (s1[b + 3] >= minw) {
          pick = s1;
        } else if (s2[b + 3] > 1e-6f) {
          pick = s2;
        }
        if (!pick) {
          ok = false;
          break;
        }
        const float inv = 1.f / pick[b + 3];
        fb[b] = pick[b] * inv;
        fb[b + 1] = pick[b + 1] * inv;
        fb[b + 2] = pick[b + 2] * inv;
      }
      if (!ok) continue;
      CellModel& m = models[i];
      m.br = fb[4];
      m.bg = fb[5];
      m.bb = fb[6];
      m.dr = fb[0] - fb[4];
      m.dg = fb[1] - fb[5];
      m.db = fb[2] - fb[6];
      const float dd = m.dr * m.dr + m.dg * m.dg + m.db * m.db;
      m.conf = std::clamp((std::sqrt(dd) - p.confidence_min) / crange, 0.f, 1.f);
      if (m.conf <= 0.f) continue;
      m.inv = 1.f / std::max(dd, 1e-6f);
      use[i] = 1;
      any = true;
    }
    if (!any) continue;
    for (int y = cy[j]; y < cy[j + 1]; ++y) {
      uint8_t* row = rgba + static_cast<size_t>(y) * row_bytes;
      for (int i = 0; i < gw; ++i) {
        if (!use[i]) continue;
        const CellModel& m = models[i];
        for (int x = cx[i]; x < cx[i + 1]; ++x) {
          uint8_t* px = row + static_cast<size_t>(x) * 4;
          const float a0 = px[3] * (1.f / 255.f);
          float ac = ((px[0] * (1.f / 255.f) - m.br) * m.dr + (px[1] * (1.f / 255.f) - m.bg) * m.dg +
                      (px[2] * (1.f / 255.f) - m.bb) * m.db) *
                     m.inv;
          ac = std::clamp(ac, 0.f, 1.f);
          float v = std::round((m.conf * ac + (1 - m.conf) * a0) * 255.f);
          // Never cross 0.5: thresholded masks (and the mask metrics) stay exactly as refined.
          v = px[3] >= 128 ? std::max(v, 128.f) : std::min(v, 127.f);
          px[3] = static_cast<uint8_t>(v);
        }
      }
    }
  }
}

size_t MattingScratchBytes(int w, int h, int lw, int lh, const MattingParams& p) {
  if (w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return 0;
  const size_t gw = static_cast<size_t>(std::min(lw, w)), gh = static_cast<size_t>(std::min(lh, h));
  const size_t gn = gw * gh;
  const size_t w0 = (gw + 1) / 2, h0 = (gh + 1) / 2;
  const size_t w1 = (w0 + 3) / 4, h1 = (h0 + 3) / 4;
  const size_t r = static_cast<size_t>(std::lround((std::sqrt(4.0 * p.sigma * p.sigma + 1.0) - 1.0) / 2.0)) + 1;
  size_t bytes = 0;
  bytes += gn * 2;                                                  // band mask + dilation temp
  bytes += (w0 * h0 + w1 * h1 + ((w1 + 3) / 4) * ((h1 + 3) / 4)) * kCh * sizeof(float);  // L0, L1, L2
  bytes += w0 * kCh * sizeof(float) * (r + 3);                      // blur row, column sums, ring
  bytes += static_cast<size_t>(w) * 4 * sizeof(uint32_t) + gw * 4 * sizeof(uint64_t);  // area sums
  bytes += gw * kRowsPerPass * 4 * sizeof(float);                                       // averaged cells
  bytes += gw * (sizeof(CellModel) + 1) + (gw + gh + 2) * sizeof(int);                 // row models, edges
  return bytes;
}

}  // namespace cutout
