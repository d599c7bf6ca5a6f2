// SPDX-License-Identifier: MIT
#include "foreground.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace cutout {
namespace {

inline bool Partial(uint8_t a) { return static_cast<uint8_t>(a - 1) < 254; }

// Whole-row passes read pixels as u32 words (alpha in the top byte on little-endian targets),
// which vectorises far better than stride-4 byte access.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr bool kLittleEndian = true;
#else
constexpr bool kLittleEndian = false;
#endif

bool RowHasPartial(const uint8_t* row, int w) {
  bool any = false;
  if (kLittleEndian) {
    for (int x = 0; x < w; ++x) {
      uint32_t v;
      std::memcpy(&v, row + 4 * static_cast<size_t>(x), 4);
      any |= (v >> 24) - 1u < 254u;
    }
  } else {
    for (int x = 0; x < w; ++x) any |= Partial(row[4 * x + 3]);
  }
  return any;
}

void ZeroTransparent(uint8_t* row, int w) {
  if (kLittleEndian) {
    for (int x = 0; x < w; ++x) {
      uint32_t v;
      std::memcpy(&v, row + 4 * static_cast<size_t>(x), 4);
      v = (v >> 24) ? v : 0u;
      std::memcpy(row + 4 * static_cast<size_t>(x), &v, 4);
    }
  } else {
    for (int x = 0; x < w; ++x) {
      uint8_t* px = row + static_cast<size_t>(x) * 4;
      const uint8_t m = px[3] ? 0xFF : 0;
      px[0] &= m;
      px[1] &= m;
      px[2] &= m;
    }
  }
}

// Working geometry: the semi-transparent bounding box (plus a margin so the solver sees some sure
// background/foreground around it), downscaled by an integer factor s.
struct Region {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // full-res box [x0,x1)×[y0,y1)
  int s = 1;                           // box-downscale factor
  int ww = 0, wh = 0;                  // working size
};

Region MakeRegion(int w, int h, int bx0, int by0, int bx1, int by1, int max_pixels) {
  Region r;
  const double budget = std::max(max_pixels, 64);
  auto factor = [&](int bw, int bh) {
    int s = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(bw) * bh / budget))));
    while (static_cast<double>((bw + s - 1) / s) * ((bh + s - 1) / s) > budget) ++s;
    return s;
  };
  int s = factor(bx1 - bx0, by1 - by0);
  const int64_t margin = 4 * static_cast<int64_t>(s);  // 4 working pixels
  r.x0 = static_cast<int>(std::max<int64_t>(0, bx0 - margin));
  r.y0 = static_cast<int>(std::max<int64_t>(0, by0 - margin));
  r.x1 = static_cast<int>(std::min<int64_t>(w, bx1 + margin));
  r.y1 = static_cast<int>(std::min<int64_t>(h, by1 + margin));
  r.s = factor(r.x1 - r.x0, r.y1 - r.y0);
  r.ww = (r.x1 - r.x0 + r.s - 1) / r.s;
  r.wh = (r.y1 - r.y0 + r.s - 1) / r.s;
  return r;
}

// Box-average the region into 4 floats per working pixel (r,g,b,a in 0..1).
void AreaAverage(const uint8_t* rgba, int w, const Region& g, float* out) {
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const int bw = g.x1 - g.x0;
  const size_t n = static_cast<size_t>(bw) * 4;
  std::vector<uint32_t> acc(n);  // s rows of 255 per column: fine for s < 2^24
  for (int j = 0; j < g.wh; ++j) {
    const int ya = g.y0 + j * g.s, yb = std::min(g.y1, ya + g.s);
    std::fill(acc.begin(), acc.end(), 0u);
    for (int y = ya; y < yb; ++y) {
      const uint8_t* row = rgba + static_cast<size_t>(y) * row_bytes + static_cast<size_t>(g.x0) * 4;
      uint32_t* a = acc.data();
      for (size_t k = 0; k < n; ++k) a[k] += row[k];
    }
    float* o = out + static_cast<size_t>(j) * g.ww * 4;
    for (int i = 0; i < g.ww; ++i) {
      const int xa = i * g.s, xb = std::min(bw, xa + g.s);
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (int x = xa; x < xb; ++x) {
        s0 += acc[4 * x];
        s1 += acc[4 * x + 1];
        s2 += acc[4 * x + 2];
        s3 += acc[4 * x + 3];
      }
      const float inv = 1.f / (255.f * (yb - ya) * (xb - xa));
      o[4 * i] = s0 * inv;
      o[4 * i + 1] = s1 * inv;
      o[4 * i + 2] = s2 * inv;
      o[4 * i + 3] = s3 * inv;
    }
  }
}

// Nearest-neighbour resize of a plane of `ch` floats per pixel (as pymatting between levels).
void ResizeNearest(const float* src, int sw, int sh, float* dst, int dw, int dh, int ch) {
  std::vector<int> xs(dw);
  for (int x = 0; x < dw; ++x) xs[x] = std::min(static_cast<int>(static_cast<int64_t>(x) * sw / dw), sw - 1);
  for (int y = 0; y < dh; ++y) {
    const int sy = std::min(static_cast<int>(static_cast<int64_t>(y) * sh / dh), sh - 1);
    const float* s = src + static_cast<size_t>(sy) * sw * ch;
    float* d = dst + static_cast<size_t>(y) * dw * ch;
    for (int x = 0; x < dw; ++x)
      for (int c = 0; c < ch; ++c) d[x * ch + c] = s[xs[x] * ch + c];
  }
}

// Per-pixel 2×2 solve shared by the sweeps and the full-res step: minimise
// |a F + (1-a) B - I|² + Σ_n w_n (|F - F_n|² + |B - B_n|²), with acc = Σ w_n [F_n, B_n], W = Σ w_n.
// fb layout: F r,g,b, pad, B r,g,b, pad.
inline void Solve(float a0, float W, const float* I, const float* acc, float* fb) {
  const float a1 = 1.f - a0;
  const float a00 = a0 * a0 + W, a11 = a1 * a1 + W, a01 = a0 * a1;
  const float inv_det = 1.f / (W * (a0 * a0 + a1 * a1 + W));  // = a00·a11 − a01², without cancellation
  for (int c = 0; c < 3; ++c) {
    const float b0 = a0 * I[c] + acc[c], b1 = a1 * I[c] + acc[4 + c];
    const float f = (a11 * b0 - a01 * b1) * inv_det, b = (a00 * b1 - a01 * b0) * inv_det;
    fb[c] = f > 0.f ? (f < 1.f ? f : 1.f) : 0.f;
    fb[4 + c] = b > 0.f ? (b < 1.f ? b : 1.f) : 0.f;
  }
}

// One Gauss-Seidel sweep (in place, as pymatting) over a level: img 4 floats/px, fb 8 floats/px.
void Sweep(const float* img, float* fb, int w, int h, float reg, float gw) {
  for (int y = 0; y < h; ++y) {
    const size_t row = static_cast<size_t>(y) * w;
    const size_t up = static_cast<size_t>(y > 0 ? y - 1 : y) * w;
    const size_t dn = static_cast<size_t>(y < h - 1 ? y + 1 : y) * w;
    for (int x = 0; x < w; ++x) {
      const size_t xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
      const size_t nb[4] = {row + xl, row + xr, up + x, dn + x};
      const float* c = img + 4 * (row + x);
      const float a0 = c[3];
      float acc[8] = {};
      float W = 0.f;
      for (int k = 0; k < 4; ++k) {
        const float wk = reg + gw * std::fabs(a0 - img[4 * nb[k] + 3]);
        W += wk;
        const float* n = fb + 8 * nb[k];
        for (int q = 0; q < 8; ++q) acc[q] += wk * n[q];
      }
      Solve(a0, W, c, acc, fb + 8 * (row + x));
    }
  }
}

// Multi-level solve on the working image (ww×wh): levels grow geometrically from 1×1.
void SolveMultiLevel(const float* img, int ww, int wh, const ForegroundParams& p, std::vector<float>& fb) {
  const int n_levels = std::max(ww, wh) > 1 ? static_cast<int>(std::ceil(std::log2(std::max(ww, wh)))) : 0;
  std::vector<float> prev(8, 0.f), level_img;
  int pw = 1, ph = 1;
  const float reg = std::max(p.regularization, 1e-8f), gw = std::max(p.gradient_weight, 0.f);
  for (int lv = 0; lv <= n_levels; ++lv) {
    const double t = n_levels ? static_cast<double>(lv) / n_levels : 1.0;
    const int lw = std::max(1, static_cast<int>(std::lround(std::pow(static_cast<double>(ww), t))));
    const int lh = std::max(1, static_cast<int>(std::lround(std::pow(static_cast<double>(wh), t))));
    const float* li = img;
    if (lw != ww || lh != wh) {
      level_img.resize(static_cast<size_t>(lw) * lh * 4);
      ResizeNearest(img, ww, wh, level_img.data(), lw, lh, 4);
      li = level_img.data();
    }
    fb.resize(static_cast<size_t>(lw) * lh * 8);
    ResizeNearest(prev.data(), pw, ph, fb.data(), lw, lh, 8);
    const int iters = (lw <= p.small_size && lh <= p.small_size) ? p.small_iterations : p.big_iterations;
    for (int it = 0; it < iters; ++it) Sweep(li, fb.data(), lw, lh, reg, gw);
    if (lv < n_levels) {
      prev.swap(fb);
      pw = lw;
      ph = lh;
    }
  }
}

}  // namespace

void EstimateForeground(uint8_t* rgba, int w, int h, const ForegroundParams& p) {
  if (!rgba || w <= 0 || h <= 0) return;
  const size_t row_bytes = static_cast<size_t>(w) * 4;

  // 1. Bounding box of semi-transparent pixels (the solve must see RGB before step 3 zeroes it).
  int bx0 = w, by0 = h, bx1 = 0, by1 = 0;
  for (int y = 0; y < h; ++y) {
    const uint8_t* row = rgba + static_cast<size_t>(y) * row_bytes;
    if (!RowHasPartial(row, w)) continue;
    int xa = 0, xb = w - 1;
    while (!Partial(row[4 * xa + 3])) ++xa;
    while (!Partial(row[4 * xb + 3])) --xb;
    bx0 = std::min(bx0, xa);
    bx1 = std::max(bx1, xb + 1);
    by0 = std::min(by0, y);
    by1 = y + 1;
  }

  Region g;
  std::vector<float> fb;
  const bool has_partial = by1 > by0;
  if (has_partial) {
    // 2. Multi-level solve on the downscaled box.
    g = MakeRegion(w, h, bx0, by0, bx1, by1, p.max_working_pixels);
    std::vector<float> img(static_cast<size_t>(g.ww) * g.wh * 4);
    AreaAverage(rgba, w, g, img.data());
    SolveMultiLevel(img.data(), g.ww, g.wh, p, fb);
  }

  // 3. Write back. Semi-transparent pixels: the same 2×2 solve at full res, with the four neighbours'
  // F,B taken from the bilinear-upsampled working solution (one Jacobi step on the finest level), so
  // F follows the photo's full-res detail where alpha is high and the smooth estimate where it is low.
  std::vector<int> tx0, tx1;
  std::vector<float> tfx, frow;
  if (has_partial) {
    const int bw = g.x1 - g.x0;
    tx0.resize(bw);
    tx1.resize(bw);
    tfx.resize(bw);
    for (int x = 0; x < bw; ++x) {
      float s = (x + 0.5f) / g.s - 0.5f;
      s = std::min(std::max(s, 0.f), static_cast<float>(g.ww - 1));
      const int i = std::min(static_cast<int>(s), std::max(g.ww - 2, 0));
      tx0[x] = i;
      tx1[x] = std::min(i + 1, g.ww - 1);
      tfx[x] = g.ww > 1 ? s - i : 0.f;
    }
    frow.resize(static_cast<size_t>(g.ww) * 8);
  }
  const float reg = std::max(p.regularization, 1e-8f), gwt = std::max(p.gradient_weight, 0.f);
  constexpr float kInv255 = 1.f / 255.f;
  for (int y = 0; y < h; ++y) {
    uint8_t* row = rgba + static_cast<size_t>(y) * row_bytes;
    if (has_partial && y >= by0 && y < by1) {
      const uint8_t* up = row - (y > 0 ? row_bytes : 0);
      const uint8_t* dn = row + (y < h - 1 ? row_bytes : 0);
      bool blended = false;
      for (int x = bx0; x < bx1; ++x) {
        uint8_t* px = row + static_cast<size_t>(x) * 4;
        if (!Partial(px[3])) continue;
        if (!blended) {  // vertical blend of the working rows, once per image row that needs it
          float sy = (y - g.y0 + 0.5f) / g.s - 0.5f;
          sy = std::min(std::max(sy, 0.f), static_cast<float>(g.wh - 1));
          const int j0 = std::min(static_cast<int>(sy), std::max(g.wh - 2, 0)), j1 = std::min(j0 + 1, g.wh - 1);
          const float fy = g.wh > 1 ? sy - j0 : 0.f;
          const float* r0 = &fb[static_cast<size_t>(j0) * g.ww * 8];
          const float* r1 = &fb[static_cast<size_t>(j1) * g.ww * 8];
          for (size_t q = 0; q < frow.size(); ++q) frow[q] = r0[q] + (r1[q] - r0[q]) * fy;
          blended = true;
        }
        const float a0 = px[3] * kInv255;
        const int xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
        const float W = 4.f * reg + gwt * kInv255 *
                                        (std::abs(px[3] - row[4 * xl + 3]) + std::abs(px[3] - row[4 * xr + 3]) +
                                         std::abs(px[3] - up[4 * x + 3]) + std::abs(px[3] - dn[4 * x + 3]));
        const int lx = x - g.x0;
        const float* l = &frow[static_cast<size_t>(tx0[lx]) * 8];
        const float* r = &frow[static_cast<size_t>(tx1[lx]) * 8];
        const float f = tfx[lx];
        float acc[8], I[3] = {px[0] * kInv255, px[1] * kInv255, px[2] * kInv255}, out[8];
        for (int q = 0; q < 8; ++q) acc[q] = W * (l[q] + (r[q] - l[q]) * f);
        Solve(a0, W, I, acc, out);
        for (int c = 0; c < 3; ++c) px[c] = static_cast<uint8_t>(out[c] * 255.f + 0.5f);
      }
    }
    ZeroTransparent(row, w);  // RGB 0 under alpha 0: smaller, faster PNGs
  }
}

size_t ForegroundScratchBytes(int w, int h, const ForegroundParams& p) {
  if (w <= 0 || h <= 0) return 0;
  const Region g = MakeRegion(w, h, 0, 0, w, h, p.max_working_pixels);
  const size_t wn = static_cast<size_t>(g.ww) * g.wh;
  // Working image (16 B) + F,B (32 B) + previous level's F,B and level image (≤ ~¼ size each, but
  // rounding of the geometric level sizes can exceed ¼: count ½).
  size_t bytes = wn * (16 + 32) + wn / 2 * (32 + 16);
  bytes += static_cast<size_t>(w) * (4 * sizeof(uint32_t) + 2 * sizeof(int) + sizeof(float));
  bytes += static_cast<size_t>(g.ww) * 8 * sizeof(float) + (static_cast<size_t>(g.ww) + 8) * sizeof(int);
  return bytes;
}

}  // namespace cutout
