// SPDX-License-Identifier: MIT
#include "refine.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "grid.h"
#include "parallel.h"
#include "scratch.h"
#include "vec.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace cutout {
namespace {

// Written so NaN maps to 0.
inline float Clamp01(float v) { return v > 0.f ? (v < 1.f ? v : 1.f) : 0.f; }

inline uint8_t ToU8(float v01) { return static_cast<uint8_t>(Clamp01(v01) * 255.f + 0.5f); }

constexpr int kTile = 64;   // coefficient tiles, in grid cells
constexpr int kStats = 13;  // mean r,g,b,p; r²,rg,rb,g²,gb,b²; rp,gp,bp
constexpr int kLanes = 16;  // per-column stats padded to 16 so row updates are whole vectors

// The window statistics of one row of GuidedCoefficients: D holds the windows' sums (kStats planes of
// n doubles: r, g, b, p, then the products as add_row lists them) and, as plane kStats, 1 / each
// window's cell count; S gets the means and the central moments (kStats planes of n floats).
void MomentsRow(const double* __restrict D, size_t n, int gw, float* __restrict S) {
  const double* __restrict inv_of = D + kStats * n;
  // Four cells at a time in vector lanes (GCC does not vectorise this loop itself), each lane as the
  // scalar tail below: the same expressions, so the same roundings.
  int x = 0;
  for (; x + 4 <= gw; x += 4) {
    const auto at = [&](int k) { return LoadVec<F64x4>(D + k * n + x); };
    const auto put = [&](int k, F64x4 v) { StoreVec(S + k * n + x, __builtin_convertvector(v, F32x4)); };
    const F64x4 inv = LoadVec<F64x4>(inv_of + x);
    const F64x4 mr = at(0) * inv, mg = at(1) * inv, mb = at(2) * inv, mp = at(3) * inv;
    put(0, mr);
    put(1, mg);
    put(2, mb);
    put(3, mp);
    put(4, at(4) * inv - mr * mr);
    put(5, at(5) * inv - mr * mg);
    put(6, at(6) * inv - mr * mb);
    put(7, at(7) * inv - mg * mg);
    put(8, at(8) * inv - mg * mb);
    put(9, at(9) * inv - mb * mb);
    put(10, at(10) * inv - mr * mp);
    put(11, at(11) * inv - mg * mp);
    put(12, at(12) * inv - mb * mp);
  }
  for (; x < gw; ++x) {
    const double inv = inv_of[x];
    const double mr = D[0 * n + x] * inv, mg = D[1 * n + x] * inv, mb = D[2 * n + x] * inv, mp = D[3 * n + x] * inv;
    // Central moments in double: the subtraction cancels heavily in flat regions.
    S[0 * n + x] = static_cast<float>(mr);
    S[1 * n + x] = static_cast<float>(mg);
    S[2 * n + x] = static_cast<float>(mb);
    S[3 * n + x] = static_cast<float>(mp);
    S[4 * n + x] = static_cast<float>(D[4 * n + x] * inv - mr * mr);
    S[5 * n + x] = static_cast<float>(D[5 * n + x] * inv - mr * mg);
    S[6 * n + x] = static_cast<float>(D[6 * n + x] * inv - mr * mb);
    S[7 * n + x] = static_cast<float>(D[7 * n + x] * inv - mg * mg);
    S[8 * n + x] = static_cast<float>(D[8 * n + x] * inv - mg * mb);
    S[9 * n + x] = static_cast<float>(D[9 * n + x] * inv - mb * mb);
    S[10 * n + x] = static_cast<float>(D[10 * n + x] * inv - mr * mp);
    S[11 * n + x] = static_cast<float>(D[11 * n + x] * inv - mg * mp);
    S[12 * n + x] = static_cast<float>(D[12 * n + x] * inv - mb * mp);
  }
}

// The 3×3 solve of one row of GuidedCoefficients: the window statistics S (kStats planes of n floats)
// → (a_r, a_g, a_b, b) per cell into out. A function of its own, pointers restrict: the loop
// vectorises (as a lambda over captured pointers it did not, one cell at a time).
void SolveRow(const float* __restrict S, size_t n, int gw, float eps, float* __restrict out) {
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

// Guided-filter coefficients (a_r, a_g, a_b, b) for a gw×gh block of the grid guide G (r,g,b,p;
// G points at the block's first cell, rows `stride` cells apart) into AB (gw×gh, packed). Windows are
// clipped at the block edges (ClippedBoxSums); the 3×3 solve is a separate loop over each row so it
// vectorises.
void GuidedCoefficients(const float* G, size_t stride, int gw, int gh, int r, float eps, float* AB) {
  const size_t n = static_cast<size_t>(gw);
  std::vector<float> st(kStats * n);
  float* __restrict S = st.data();
  // A row's values and products, worked out when it enters the window and kept in a ring of 2r + 2
  // rows until it leaves (the rows in the window and the one entering): subtracted as they were added.
  const int ring_rows = 2 * r + 2;
  std::vector<double> ringv(static_cast<size_t>(ring_rows) * kLanes * n);
  double* __restrict ring = ringv.data();
  auto add_row = [gw, G, stride, ring, ring_rows, n](double* __restrict c, int j, double sign) {
    double* __restrict v = ring + static_cast<size_t>(j % ring_rows) * kLanes * n;
    if (sign < 0) {
      for (size_t k = 0; k < kLanes * n; ++k) c[k] -= v[k];
      return;
    }
    const float* __restrict g = G + static_cast<size_t>(j) * stride * 4;
    for (int x = 0; x < gw; ++x) {
      const double R = g[4 * x], Gc = g[4 * x + 1], B = g[4 * x + 2], P = g[4 * x + 3];
      const double p[kLanes] = {R,      Gc,    B,     P,      R * R, R * Gc, R * B, Gc * Gc,
                                Gc * B, B * B, R * P, Gc * P, B * P, 0,      0,     0};
      for (int k = 0; k < kLanes; ++k) v[kLanes * x + k] = p[k];
    }
    for (size_t k = 0; k < kLanes * n; ++k) c[k] += v[k];
  };
  // A row's window sums (kStats planes of doubles) and 1 / cell count, then the row's moments and
  // solve, each a loop over the row that vectorises.
  std::vector<double> sums(kStats * n + n);
  double* __restrict D = sums.data();
  auto emit = [D, n](int, int x, const double* s, double inv) {
    for (int k = 0; k < kStats; ++k) D[k * n + x] = s[k];
    D[kStats * n + x] = inv;
  };
  auto solve_row = [D, S, n, gw, eps, AB](int y) {
    MomentsRow(D, n, gw, S);
    SolveRow(S, n, gw, eps, AB + static_cast<size_t>(y) * gw * 4);
  };
  ClippedBoxSums<kLanes>(gw, gh, r, add_row, emit, solve_row);
}

// Box mean (radius r, clipped window) of a 4-channel interleaved float plane, src -> dst.
void BoxMean4(const float* src, int gw, int gh, int r, float* dst) {
  const size_t n = static_cast<size_t>(gw) * 4;
  auto add_row = [n, src](double* __restrict c, int j, double sign) {
    const float* __restrict s = src + static_cast<size_t>(j) * n;
    for (size_t k = 0; k < n; ++k) c[k] += sign * s[k];
  };
  auto emit = [n, dst](int y, int x, const double* s, double inv) {
    float* o = dst + static_cast<size_t>(y) * n;
    for (int k = 0; k < 4; ++k) o[4 * x + k] = static_cast<float>(s[k] * inv);
  };
  ClippedBoxSums<4>(gw, gh, r, add_row, emit, [](int) {});
}

// Grid rows [j0, j1): bit 1 where the matte (`matte`: its grid value of cell q, 0..1) is above lo,
// bit 2 where it is below hi.
template <typename Matte>
void ClassifyBand(Matte matte, int gw, int j0, int j1, float lo, float hi, uint8_t* band) {
  for (size_t q = static_cast<size_t>(j0) * gw; q < static_cast<size_t>(j1) * gw; ++q) {
    const float v = matte(q);
    band[q] = static_cast<uint8_t>((v > lo ? 1 : 0) | (v < hi ? 2 : 0));
  }
}

// Output rows [ya, yb) of UpsampleMatteBilinear; `row` is lw + 8 floats of scratch.
void UpsampleRows(const float* low, int lw, uint8_t* dst, int w, int step, size_t stride, const int* x0, const int* x1,
                  const float* fx, const int* y0, const int* y1, const float* fy, int ya, int yb, float* row) {
  const size_t st = static_cast<size_t>(step);
  for (int y = ya; y < yb; ++y) {
    // Vertical blend once per output row (lw wide), then horizontal taps per pixel.
    const float* a = low + static_cast<size_t>(y0[y]) * lw;
    const float* b = low + static_cast<size_t>(y1[y]) * lw;
    const float t = fy[y];
    for (int i = 0; i < lw; ++i) row[i] = (a[i] + (b[i] - a[i]) * t) * 255.f;
    uint8_t* d = dst + static_cast<size_t>(y) * stride;
    int x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (step == 4) {
      // RGBA (dst at alpha, byte 3 of each pixel): eight pixels at a time, the same arithmetic per
      // lane, alpha merged into the pixels' 32-bit words (one load and one store for eight, not
      // eight byte stores).
      uint8_t* px = d - 3;
      const U32x8 rgb_mask = U32x8{} + 0x00FFFFFFu;
      for (; x + 8 <= w; x += 8) {
        F32x8 l, rr;
#if defined(__AVX2__)
        // Taps within eight columns of the first (the matte enlarged, as it always is but for photos
        // smaller than the matte): two loads and two permutes instead of sixteen single loads. i1 is
        // i0 + 1 for a matte two or more wide, so the right taps are the same permute one column on.
        if (lw >= 2 && x0[x + 7] - x0[x] <= 7) {
          const __m256i lane =
              _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x0 + x)), _mm256_set1_epi32(x0[x]));
          l = _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + x0[x]), lane);
          rr = _mm256_permutevar8x32_ps(_mm256_loadu_ps(row + x0[x] + 1), lane);
        } else
#endif
          for (int i = 0; i < 8; ++i) {
            l[i] = row[x0[x + i]];
            rr[i] = row[x1[x + i]];
          }
        F32x8 v = l + (rr - l) * LoadVec<F32x8>(fx + x);
        const F32x8 zero = {}, top = zero + 255.f;
        v = v > zero ? (v < top ? v : top) : zero;
        const U32x8 a = __builtin_convertvector(__builtin_convertvector(v + 0.5f, I32x8), U32x8);
        uint8_t* p8 = px + static_cast<size_t>(x) * 4;
        StoreVec(p8, (LoadVec<U32x8>(p8) & rgb_mask) | (a << 24));
      }
    }
#endif
    for (; x < w; ++x) {
      const float l = row[x0[x]], rr = row[x1[x]];
      float v = l + (rr - l) * fx[x];
      v = v > 0.f ? (v < 255.f ? v : 255.f) : 0.f;
      d[static_cast<size_t>(x) * st] = static_cast<uint8_t>(v + 0.5f);
    }
  }
}

// Geometry of step 4 (grid cells → output pixels): cell edges and centre-aligned bilinear taps.
struct FullResMap {
  const std::vector<int>& cx;
  const std::vector<int>& cy;
  const LinearTaps& tx;
  const LinearTaps& ty;
};

// Step 4 of RefineMatteGuided on output rows [ya, yb): q = a·I + b inside the band (runs of band
// cells per row) from the grid coefficients C (4 floats per cell). Each row reads and writes only its
// own pixels. `crow` is gw*4 floats of scratch.
void ApplyCoefficients(uint8_t* rgba, int w, int gw, const FullResMap& m, const uint8_t* band, const float* C, int ya,
                       int yb, float* crow) {
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  // The grid row holding ya (cy strictly increases: every cell has a pixel).
  int j = static_cast<int>(std::upper_bound(m.cy.begin(), m.cy.end(), ya) - m.cy.begin()) - 1;
  const int* tx0 = m.tx.i0.data();
  const int* tx1 = m.tx.i1.data();
  const float* tfx = m.tx.f.data();
  for (int y = ya; y < yb; ++y) {
    while (m.cy[j + 1] <= y) ++j;
    const uint8_t* brow = &band[static_cast<size_t>(j) * gw];
    const float* c0 = &C[static_cast<size_t>(m.ty.i0[y]) * gw * 4];
    const float* c1 = &C[static_cast<size_t>(m.ty.i1[y]) * gw * 4];
    const float t = m.ty.f[y];
    uint8_t* px = rgba + static_cast<size_t>(y) * row_bytes;
    int i = 0;
    while (i < gw) {
      if (!brow[i]) {
        ++i;
        continue;
      }
      const int i_start = i;
      while (i < gw && brow[i]) ++i;
      const int xa = m.cx[i_start], xb = m.cx[i];
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

}  // namespace

void UpsampleMatteBilinear(const float* low, int lw, int lh, uint8_t* dst, int w, int h, int step, size_t stride,
                           int threads) {
  if (!low || !dst || lw <= 0 || lh <= 0 || w <= 0 || h <= 0) return;
  threads = ClampThreads(threads);
  const LinearTaps tx = StretchTaps(lw, w), ty = StretchTaps(lh, h);
  std::vector<std::vector<float>> rows(threads);  // one blended matte row per worker
  const int band = BandRows(w);
  ParallelForEach((h + band - 1) / band, threads, [&](int worker, int item) {
    rows[worker].resize(lw + 8);  // eight floats loadable from any column
    UpsampleRows(low, lw, dst, w, step, stride, tx.i0.data(), tx.i1.data(), tx.f.data(), ty.i0.data(), ty.i1.data(),
                 ty.f.data(), item * band, std::min(h, item * band + band), rows[worker].data());
  });
}

void RefineMatteGuided(uint8_t* rgba, int w, int h, const float* low, int lw, int lh, const RefineParams& p,
                       int threads) {
  if (!rgba || !low || w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return;
  threads = ClampThreads(threads);
  // Coefficient grid: the matte's own grid, unless the matte is finer than the photo.
  const int gw = std::min(lw, w), gh = std::min(lh, h);
  const bool matte_is_grid = (gw == lw && gh == lh);
  const size_t gn = static_cast<size_t>(gw) * gh;
  const std::vector<int> cx = CellEdges(w, gw), cy = CellEdges(h, gh);
  // Grid rows per work item in steps 1-2: about 64K cells.
  const int grid_band = BandRows(gw, 1 << 16);

  // 1. Matte p on the grid: the matte itself where it is the grid (its guide r,g,b and p go into G
  // later, only on the tiles that need them), else averaged onto the grid with the colours.
  // 2. Uncertain band on the grid: some sample within k is above band_lo and some is below band_hi.
  // That covers soft values and hard 0→1 steps alike; flat regions stay untouched.
  // Only cells within reach of the band are ever read from G and C (step 3 writes them), so neither is
  // filled or zeroed whole: at 1024² that was 32 MB of stores per photo. Where G is averaged whole,
  // the workers write it row band by row band (a fresh 16 MB buffer's page faults split too).
  ScratchArray<float> G(gn * 4), C(gn * 4);
  std::vector<uint8_t> band(gn);
  ParallelForEach((gh + grid_band - 1) / grid_band, threads, [&](int, int item) {
    const int j0 = item * grid_band, j1 = std::min(gh, j0 + grid_band);
    if (matte_is_grid) {
      ClassifyBand([low](size_t q) { return Clamp01(low[q]); }, gw, j0, j1, p.band_lo, p.band_hi, band.data());
    } else {
      // Alpha holds the matte resampled to the photo: average it onto the grid with the colours.
      AreaAverage(rgba, w, cx, cy, 0, gw, j0, j1, &G[static_cast<size_t>(j0) * gw * 4], gw);
      const float* g = G.get();
      ClassifyBand([g](size_t q) { return g[4 * q + 3]; }, gw, j0, j1, p.band_lo, p.band_hi, band.data());
    }
  });
  const int k = 1 + std::min(std::max(p.band_dilate, 0), 64);
  DilateOr(band, gw, gh, k, threads);
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
    // The guide on every tile within reach of an active one, in runs of at most 4 tiles of a tile
    // row: each run writes only its own cells of G.
    const int reach = (2 * r + kTile - 1) / kTile;  // in tiles
    std::vector<uint8_t> need = active;
    DilateOr(need, ntx, nty, reach);
    struct Run {
      int tj, t0, t1;
    };
    std::vector<Run> runs;
    for (int tj = 0; tj < nty; ++tj)
      for (int ti = 0; ti < ntx;) {
        if (!need[static_cast<size_t>(tj) * ntx + ti]) {
          ++ti;
          continue;
        }
        const int t0 = ti;
        while (ti < ntx && ti - t0 < 4 && need[static_cast<size_t>(tj) * ntx + ti]) ++ti;
        runs.push_back({tj, t0, ti});
      }
    ParallelForEach(static_cast<int>(runs.size()), threads, [&](int, int item) {
      const Run& run = runs[item];
      const int gy0 = run.tj * kTile, gy1 = std::min(gh, gy0 + kTile);
      const int gx0 = run.t0 * kTile, gx1 = std::min(gw, run.t1 * kTile);
      AreaAverage(rgba, w, cx, cy, gx0, gx1, gy0, gy1, &G[static_cast<size_t>(gy0) * gw * 4], gw);
      // AreaAverage also wrote the alpha average into lane 3: restore the float matte.
      for (int j = gy0; j < gy1; ++j)
        for (int i = gx0; i < gx1; ++i)
          G[(static_cast<size_t>(j) * gw + i) * 4 + 3] = Clamp01(low[static_cast<size_t>(j) * gw + i]);
    });
  }
  // Each active tile writes only its own cells of C; the tile buffers are per worker.
  std::vector<int> tiles;
  for (int t = 0; t < ntx * nty; ++t)
    if (active[t]) tiles.push_back(t);
  std::vector<std::vector<float>> tile_ab(threads), tile_ab2(threads);
  ParallelForEach(static_cast<int>(tiles.size()), threads, [&](int worker, int item) {
    const int ti = tiles[item] % ntx, tj = tiles[item] / ntx;
    const int x0 = ti * kTile, y0 = tj * kTile, x1 = std::min(gw, x0 + kTile), y1 = std::min(gh, y0 + kTile);
    const int bx0 = std::max(0, x0 - 2 * r), by0 = std::max(0, y0 - 2 * r);
    const int bx1 = std::min(gw, x1 + 2 * r), by1 = std::min(gh, y1 + 2 * r);
    const int bw = bx1 - bx0, bh = by1 - by0;
    std::vector<float>& AB = tile_ab[worker];
    std::vector<float>& AB2 = tile_ab2[worker];
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
  });

  // 4. q = a·I + b at full resolution, in bands of output rows.
  const LinearTaps tx = StretchTaps(gw, w), ty = StretchTaps(gh, h);
  const FullResMap map{cx, cy, tx, ty};
  std::vector<std::vector<float>> crows(threads);
  const int rows = BandRows(w);
  ParallelForEach((h + rows - 1) / rows, threads, [&](int worker, int item) {
    crows[worker].resize(static_cast<size_t>(gw) * 4);
    ApplyCoefficients(rgba, w, gw, map, band.data(), C.get(), item * rows, std::min(h, item * rows + rows),
                      crows[worker].data());
  });
}

size_t RefineScratchBytes(int w, int h, int lw, int lh, const RefineParams& p, int threads) {
  if (w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return 0;
  const size_t gw = static_cast<size_t>(std::min(lw, w)), gh = static_cast<size_t>(std::min(lh, h));
  const size_t gn = gw * gh;
  const size_t r = static_cast<size_t>(std::min(std::max(p.radius, 0), static_cast<int>(std::max(gw, gh))));
  const size_t bw = std::min(gw, kTile + 4 * r), bh = std::min(gh, kTile + 4 * r);  // one tile + halo
  size_t shared = 0;
  shared += gn * 4 * sizeof(float) * 2;                                        // guide/matte G, coefficients C
  shared += gn * 2;                                                            // band mask + dilation temp
  shared += (static_cast<size_t>(w) + h) * (2 * sizeof(int) + sizeof(float));  // taps
  shared += (gw + gh + 2) * sizeof(int);                                       // cell edges
  size_t worker = 0;
  worker += bw * bh * 4 * sizeof(float) * 2;  // a,b of a tile and their box mean
  worker += bw * (kLanes * sizeof(double) + kStats * sizeof(float)) + bw * 4 * sizeof(double);
  worker += (2 * r + 2) * bw * kLanes * sizeof(double) + (kStats + 1) * bw * sizeof(double);  // row ring, row sums
  worker += AreaSumsScratchBytes(w, gw);                                                      // area sums
  worker += gw * 4 * sizeof(float);                                                           // blended coefficient row
  return shared + static_cast<size_t>(std::max(threads, 1)) * worker;
}

}  // namespace cutout
