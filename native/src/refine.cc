// SPDX-License-Identifier: MIT
#include "refine.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "grid.h"

namespace cutout {
namespace {

// Written so NaN maps to 0.
inline float Clamp01(float v) { return v > 0.f ? (v < 1.f ? v : 1.f) : 0.f; }

inline uint8_t ToU8(float v01) { return static_cast<uint8_t>(Clamp01(v01) * 255.f + 0.5f); }

// Centre-aligned linear resampling taps, n_src samples onto n_dst: out[d] = s[i0]*(1-f) + s[i1]*f.
void BuildTaps(int n_src, int n_dst, std::vector<int>& i0, std::vector<int>& i1, std::vector<float>& f) {
  i0.resize(n_dst);
  i1.resize(n_dst);
  f.resize(n_dst);
  const double scale = static_cast<double>(n_src) / n_dst;
  for (int d = 0; d < n_dst; ++d) {
    double s = (d + 0.5) * scale - 0.5;
    if (s < 0) s = 0;
    if (s > n_src - 1) s = n_src - 1;
    int i = static_cast<int>(s);
    if (i > n_src - 2) i = std::max(n_src - 2, 0);
    i0[d] = i;
    i1[d] = std::min(i + 1, n_src - 1);
    f[d] = n_src > 1 ? static_cast<float>(s - i) : 0.f;
  }
}

constexpr int kTile = 64;   // coefficient tiles, in grid cells
constexpr int kStats = 13;  // mean r,g,b,p; r²,rg,rb,g²,gb,b²; rp,gp,bp
constexpr int kLanes = 16;  // per-column stats padded to 16 so row updates are whole vectors

// Guided-filter coefficients (a_r, a_g, a_b, b) for a gw×gh block of the grid guide G (r,g,b,p;
// G points at the block's first cell, rows `stride` cells apart) into AB (gw×gh, packed). Windows are
// clipped at the block edges. Box sums stream down the rows: column sums in double (no drift from
// running add/subtract), then a running horizontal window per row; the 3×3 solve is a separate
// loop over the row so it vectorises.
void GuidedCoefficients(const float* G, size_t stride, int gw, int gh, int r, float eps, float* AB) {
  const size_t n = static_cast<size_t>(gw);
  std::vector<double> col(kLanes * n, 0.0);
  std::vector<float> st(kStats * n);
  auto add_row = [gw, G, stride](double* __restrict c, int j, double sign) {
    const float* __restrict g = G + static_cast<size_t>(j) * stride * 4;
    for (int x = 0; x < gw; ++x) {
      const double R = g[4 * x], Gc = g[4 * x + 1], B = g[4 * x + 2], P = g[4 * x + 3];
      const double v[kLanes] = {R, Gc, B, P, R * R, R * Gc, R * B, Gc * Gc, Gc * B, B * B, R * P, Gc * P, B * P, 0, 0, 0};
      for (int k = 0; k < kLanes; ++k) c[kLanes * x + k] += sign * v[k];
    }
  };
  for (int j = 0; j <= std::min(r, gh - 1); ++j) add_row(col.data(), j, 1.0);
  for (int y = 0; y < gh; ++y) {
    if (y > 0) {
      if (y + r < gh) add_row(col.data(), y + r, 1.0);
      if (y - r - 1 >= 0) add_row(col.data(), y - r - 1, -1.0);
    }
    const int ny = std::min(y + r, gh - 1) - std::max(y - r, 0) + 1;
    const double* __restrict cs = col.data();
    float* __restrict S = st.data();
    double s[kLanes] = {};
    for (int x = 0; x <= std::min(r, gw - 1); ++x)
      for (int k = 0; k < kLanes; ++k) s[k] += cs[kLanes * x + k];
    for (int x = 0; x < gw; ++x) {
      if (x > 0) {
        if (x + r < gw)
          for (int k = 0; k < kLanes; ++k) s[k] += cs[kLanes * (x + r) + k];
        if (x - r - 1 >= 0)
          for (int k = 0; k < kLanes; ++k) s[k] -= cs[kLanes * (x - r - 1) + k];
      }
      const int nx = std::min(x + r, gw - 1) - std::max(x - r, 0) + 1;
      const double inv = 1.0 / (static_cast<double>(nx) * ny);
      const double mr = s[0] * inv, mg = s[1] * inv, mb = s[2] * inv, mp = s[3] * inv;
      // Central moments in double: the subtraction cancels heavily in flat regions.
      S[0 * n + x] = static_cast<float>(mr);
      S[1 * n + x] = static_cast<float>(mg);
      S[2 * n + x] = static_cast<float>(mb);
      S[3 * n + x] = static_cast<float>(mp);
      S[4 * n + x] = static_cast<float>(s[4] * inv - mr * mr);
      S[5 * n + x] = static_cast<float>(s[5] * inv - mr * mg);
      S[6 * n + x] = static_cast<float>(s[6] * inv - mr * mb);
      S[7 * n + x] = static_cast<float>(s[7] * inv - mg * mg);
      S[8 * n + x] = static_cast<float>(s[8] * inv - mg * mb);
      S[9 * n + x] = static_cast<float>(s[9] * inv - mb * mb);
      S[10 * n + x] = static_cast<float>(s[10] * inv - mr * mp);
      S[11 * n + x] = static_cast<float>(s[11] * inv - mg * mp);
      S[12 * n + x] = static_cast<float>(s[12] * inv - mb * mp);
    }
    float* __restrict out = AB + static_cast<size_t>(y) * gw * 4;
    for (int x = 0; x < gw; ++x) {
      const float a = S[4 * n + x] + eps, b = S[5 * n + x], c = S[6 * n + x];
      const float d = S[7 * n + x] + eps, e = S[8 * n + x], f = S[9 * n + x] + eps;
      const float i00 = d * f - e * e, i01 = c * e - b * f, i02 = b * e - c * d;
      const float i11 = a * f - c * c, i12 = b * c - a * e, i22 = a * d - b * b;
      const float idet = 1.f / (a * i00 + b * i01 + c * i02);
      const float vr = S[10 * n + x], vg = S[11 * n + x], vb = S[12 * n + x];
      const float ar = (i00 * vr + i01 * vg + i02 * vb) * idet;
      const float ag = (i01 * vr + i11 * vg + i12 * vb) * idet;
      const float ab = (i02 * vr + i12 * vg + i22 * vb) * idet;
      out[4 * x + 0] = ar;
      out[4 * x + 1] = ag;
      out[4 * x + 2] = ab;
      out[4 * x + 3] = S[3 * n + x] - ar * S[0 * n + x] - ag * S[1 * n + x] - ab * S[2 * n + x];
    }
  }
}

// Box mean (radius r, clamped window) of a 4-channel interleaved float plane, src -> dst.
void BoxMean4(const float* src, int gw, int gh, int r, float* dst) {
  const size_t n = static_cast<size_t>(gw) * 4;
  std::vector<double> colv(n, 0.0);
  double* __restrict col = colv.data();
  auto add_row = [n, src](double* __restrict c, int j, double sign) {
    const float* __restrict s = src + static_cast<size_t>(j) * n;
    for (size_t k = 0; k < n; ++k) c[k] += sign * s[k];
  };
  for (int j = 0; j <= std::min(r, gh - 1); ++j) add_row(col, j, 1.0);
  for (int y = 0; y < gh; ++y) {
    if (y > 0) {
      if (y + r < gh) add_row(col, y + r, 1.0);
      if (y - r - 1 >= 0) add_row(col, y - r - 1, -1.0);
    }
    const int ny = std::min(y + r, gh - 1) - std::max(y - r, 0) + 1;
    double s[4] = {};
    for (int x = 0; x <= std::min(r, gw - 1); ++x)
      for (int k = 0; k < 4; ++k) s[k] += col[4 * x + k];
    float* o = dst + static_cast<size_t>(y) * n;
    for (int x = 0; x < gw; ++x) {
      if (x > 0) {
        if (x + r < gw)
          for (int k = 0; k < 4; ++k) s[k] += col[4 * (x + r) + k];
        if (x - r - 1 >= 0)
          for (int k = 0; k < 4; ++k) s[k] -= col[4 * (x - r - 1) + k];
      }
      const int nx = std::min(x + r, gw - 1) - std::max(x - r, 0) + 1;
      const double inv = 1.0 / (static_cast<double>(nx) * ny);
      for (int k = 0; k < 4; ++k) o[4 * x + k] = static_cast<float>(s[k] * inv);
    }
  }
}

}  // namespace

void UpsampleMatteBilinear(const float* low, int lw, int lh, uint8_t* dst, int w, int h, int step, size_t stride) {
  if (!low || !dst || lw <= 0 || lh <= 0 || w <= 0 || h <= 0) return;
  std::vector<int> x0, x1, y0, y1;
  std::vector<float> fx, fy;
  BuildTaps(lw, w, x0, x1, fx);
  BuildTaps(lh, h, y0, y1, fy);
  std::vector<float> row(lw);
  const size_t st = static_cast<size_t>(step);
  for (int y = 0; y < h; ++y) {
    // Vertical blend once per output row (lw wide), then horizontal taps per pixel.
    const float* a = low + static_cast<size_t>(y0[y]) * lw;
    const float* b = low + static_cast<size_t>(y1[y]) * lw;
    const float t = fy[y];
    for (int i = 0; i < lw; ++i) row[i] = (a[i] + (b[i] - a[i]) * t) * 255.f;
    uint8_t* d = dst + static_cast<size_t>(y) * stride;
    const float* rw = row.data();
    for (int x = 0; x < w; ++x) {
      const float l = rw[x0[x]], rr = rw[x1[x]];
      float v = l + (rr - l) * fx[x];
      v = v > 0.f ? (v < 255.f ? v : 255.f) : 0.f;
      d[static_cast<size_t>(x) * st] = static_cast<uint8_t>(v + 0.5f);
    }
  }
}

void RefineMatteGuided(uint8_t* rgba, int w, int h, const float* low, int lw, int lh, const RefineParams& p) {
  if (!rgba || !low || w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return;
  // Coefficient grid: the matte's own grid, unless the matte is finer than the photo.
  const int gw = std::min(lw, w), gh = std::min(lh, h);
  const bool matte_is_grid = (gw == lw && gh == lh);
  const size_t gn = static_cast<size_t>(gw) * gh;
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const std::vector<int> cx = CellEdges(w, gw), cy = CellEdges(h, gh);

  // 1. Matte p on the grid (in G's 4th lane); the guide r,g,b comes later, only where needed.
  std::vector<float> G(gn * 4);
  if (matte_is_grid) {
    for (size_t q = 0; q < gn; ++q) G[4 * q + 3] = Clamp01(low[q]);
  } else {
    AreaAverage(rgba, w, cx, cy, 0, gw, 0, gh, G.data(), gw);  // alpha holds the resampled matte
  }

  // 2. Uncertain band on the grid: some sample within k is above band_lo and some is below band_hi.
  // That covers soft values and hard 0→1 steps alike; flat regions stay untouched.
  const int k = 1 + std::min(std::max(p.band_dilate, 0), 64);
  std::vector<uint8_t> band(gn);
  for (size_t q = 0; q < gn; ++q) {
    const float v = G[4 * q + 3];
    band[q] = static_cast<uint8_t>((v > p.band_lo ? 1 : 0) | (v < p.band_hi ? 2 : 0));
  }
  DilateOr(band, gw, gh, k);
  for (size_t q = 0; q < gn; ++q) band[q] = band[q] == 3;

  // 3. Coefficients only on tiles the band's bilinear footprint touches. A tile needs the guide
  // 2r cells around it (coefficients, then their box mean), so the photo is only read there.
  const int r = std::min(std::max(p.radius, 0), std::max(gw, gh));
  const float eps = std::max(p.eps, 1e-6f);
  const int ntx = (gw + kTile - 1) / kTile, nty = (gh + kTile - 1) / kTile;
  std::vector<uint8_t> active(static_cast<size_t>(ntx) * nty, 0);
  bool any = false;
  for (int j = 0; j < gh; ++j)
    for (int i = 0; i < gw; ++i)
      if (band[static_cast<size_t>(j) * gw + i]) {
        any = true;
        // +-1 cell: bilinear taps of band pixels may reach the neighbouring cell.
        for (int tj = std::max(j - 1, 0) / kTile; tj <= std::min(j + 1, gh - 1) / kTile; ++tj)
          for (int ti = std::max(i - 1, 0) / kTile; ti <= std::min(i + 1, gw - 1) / kTile; ++ti)
            active[static_cast<size_t>(tj) * ntx + ti] = 1;
      }
  if (!any) return;
  if (matte_is_grid) {
    const int reach = (2 * r + kTile - 1) / kTile;  // in tiles
    std::vector<uint8_t> need = active;
    DilateOr(need, ntx, nty, reach);
    for (int tj = 0; tj < nty; ++tj) {
      const int gy0 = tj * kTile, gy1 = std::min(gh, gy0 + kTile);
      for (int ti = 0; ti < ntx;) {
        if (!need[static_cast<size_t>(tj) * ntx + ti]) {
          ++ti;
          continue;
        }
        const int t0 = ti;
        while (ti < ntx && need[static_cast<size_t>(tj) * ntx + ti]) ++ti;
        AreaAverage(rgba, w, cx, cy, t0 * kTile, std::min(gw, ti * kTile), gy0, gy1, &G[static_cast<size_t>(gy0) * gw * 4], gw);
        // AreaAverage also wrote the alpha average into lane 3: restore the float matte.
        for (int j = gy0; j < gy1; ++j)
          for (int i = t0 * kTile; i < std::min(gw, ti * kTile); ++i)
            G[(static_cast<size_t>(j) * gw + i) * 4 + 3] = Clamp01(low[static_cast<size_t>(j) * gw + i]);
      }
    }
  }
  std::vector<float> C(gn * 4), AB, AB2;
  for (int tj = 0; tj < nty; ++tj)
    for (int ti = 0; ti < ntx; ++ti) {
      if (!active[static_cast<size_t>(tj) * ntx + ti]) continue;
      const int x0 = ti * kTile, y0 = tj * kTile, x1 = std::min(gw, x0 + kTile), y1 = std::min(gh, y0 + kTile);
      const int bx0 = std::max(0, x0 - 2 * r), by0 = std::max(0, y0 - 2 * r);
      const int bx1 = std::min(gw, x1 + 2 * r), by1 = std::min(gh, y1 + 2 * r);
      const int bw = bx1 - bx0, bh = by1 - by0;
      AB.resize(static_cast<size_t>(bw) * bh * 4);
      AB2.resize(AB.size());
      GuidedCoefficients(&G[(static_cast<size_t>(by0) * gw + bx0) * 4], gw, bw, bh, r, eps, AB.data());
      BoxMean4(AB.data(), bw, bh, r, AB2.data());
      // Keep the tile's interior; work in 0..255 at full res (raw bytes in, alpha byte out):
      // a is unchanged, b scales by 255.
      for (int j = y0; j < y1; ++j) {
        const float* s = &AB2[(static_cast<size_t>(j - by0) * bw + (x0 - bx0)) * 4];
        float* d = &C[(static_cast<size_t>(j) * gw + x0) * 4];
        for (int i = 0; i < x1 - x0; ++i) {
          d[4 * i] = s[4 * i];
          d[4 * i + 1] = s[4 * i + 1];
          d[4 * i + 2] = s[4 * i + 2];
          d[4 * i + 3] = s[4 * i + 3] * 255.f;
        }
      }
    }

  // 4. q = a·I + b at full resolution, only inside the band (runs of band cells per row).
  std::vector<int> tx0, tx1, ty0, ty1;
  std::vector<float> tfx, tfy;
  BuildTaps(gw, w, tx0, tx1, tfx);
  BuildTaps(gh, h, ty0, ty1, tfy);
  std::vector<float> crow(static_cast<size_t>(gw) * 4);
  int j = 0;
  for (int y = 0; y < h; ++y) {
    while (cy[j + 1] <= y) ++j;
    const uint8_t* brow = &band[static_cast<size_t>(j) * gw];
    const float* c0 = &C[static_cast<size_t>(ty0[y]) * gw * 4];
    const float* c1 = &C[static_cast<size_t>(ty1[y]) * gw * 4];
    const float t = tfy[y];
    uint8_t* px = rgba + static_cast<size_t>(y) * row_bytes;
    int i = 0;
    while (i < gw) {
      if (!brow[i]) {
        ++i;
        continue;
      }
      const int i_start = i;
      while (i < gw && brow[i]) ++i;
      const int xa = cx[i_start], xb = cx[i];
      // Vertically blended coefficients for the grid columns this run samples.
      const int ga = tx0[xa], gb = tx1[xb - 1];
      for (size_t q = static_cast<size_t>(ga) * 4; q < static_cast<size_t>(gb + 1) * 4; ++q)
        crow[q] = c0[q] + (c1[q] - c0[q]) * t;
      for (int x = xa; x < xb; ++x) {
        const float* l = &crow[static_cast<size_t>(tx0[x]) * 4];
        const float* rr = &crow[static_cast<size_t>(tx1[x]) * 4];
        const float f = tfx[x];
        const float ar = l[0] + (rr[0] - l[0]) * f, ag = l[1] + (rr[1] - l[1]) * f;
        const float ab = l[2] + (rr[2] - l[2]) * f, bb = l[3] + (rr[3] - l[3]) * f;
        uint8_t* o = px + static_cast<size_t>(x) * 4;
        float v = ar * o[0] + ag * o[1] + ab * o[2] + bb;
        v = v > 0.f ? (v < 255.f ? v : 255.f) : 0.f;
        o[3] = static_cast<uint8_t>(v + 0.5f);
      }
    }
  }
}

size_t RefineScratchBytes(int w, int h, int lw, int lh, const RefineParams& p) {
  if (w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return 0;
  const size_t gw = static_cast<size_t>(std::min(lw, w)), gh = static_cast<size_t>(std::min(lh, h));
  const size_t gn = gw * gh;
  const size_t r = static_cast<size_t>(std::min(std::max(p.radius, 0), static_cast<int>(std::max(gw, gh))));
  const size_t bw = std::min(gw, kTile + 4 * r), bh = std::min(gh, kTile + 4 * r);  // one tile + halo
  size_t bytes = 0;
  bytes += gn * 4 * sizeof(float) * 2;                         // guide/matte G, coefficients C
  bytes += gn * 2;                                             // band mask + dilation temp
  bytes += bw * bh * 4 * sizeof(float) * 2;                    // per-tile a,b and their box mean
  bytes += bw * (kLanes * sizeof(double) + kStats * sizeof(float)) + bw * 4 * sizeof(double);
  bytes += static_cast<size_t>(w) * 4 * sizeof(uint32_t) + gw * 4 * sizeof(uint64_t);  // area sums
  bytes += (static_cast<size_t>(w) + h) * (2 * sizeof(int) + sizeof(float));            // taps
  bytes += (gw + gh + 2) * sizeof(int) + gw * 4 * sizeof(float);                        // edges, row
  return bytes;
}

}  // namespace cutout
