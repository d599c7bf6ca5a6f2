// SPDX-License-Identifier: MIT
#include "matting.h"

#include <algorithm>
#include <cmath>
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

// std::round (halves away from zero) for v >= 0 or NaN, without the libm call std::round is at -O3
// without -ffast-math (one per band pixel): trunc is one instruction, and v - trunc(v) is exact.
inline float RoundNonNegative(float v) {
  const float t = std::trunc(v);
  return t + static_cast<float>(v - t >= 0.5f);  // a compare and a mask, no branch to mispredict
}

// Per cell of the colour planes: Σf·r, Σf·g, Σf·b, Σf (sure foreground), then the same for background.
constexpr int kCh = 8;

// Grid rows averaged per call of AreaAverage (bounds that buffer to 16 rows of cells).
constexpr int kRowsPerPass = 16;

// Mean over f×f blocks (partial blocks at the right/bottom edges averaged over the cells they have).
std::vector<float> Downscale(const float* a, int w, int h, int f, int& ow, int& oh) {
  ow = (w + f - 1) / f;
  oh = (h + f - 1) / f;
  std::vector<float> o(static_cast<size_t>(ow) * oh * kCh, 0.f);
  // A cell's kCh floats as one vector: each lane adds (and divides) as the scalar loop did.
  static_assert(kCh == 8, "one F32x8 per cell");
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float* d = &o[(static_cast<size_t>(y / f) * ow + x / f) * kCh];
      StoreVec(d, LoadVec<F32x8>(d) + LoadVec<F32x8>(&a[(static_cast<size_t>(y) * w + x) * kCh]));
    }
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      const int cnt = (std::min(w, (x + 1) * f) - x * f) * (std::min(h, (y + 1) * f) - y * f);
      float* d = &o[(static_cast<size_t>(y) * ow + x) * kCh];
      StoreVec(d, LoadVec<F32x8>(d) / static_cast<float>(cnt));
    }
  return o;
}

// A level's taps at grid cell index g (a column or a row) for a level whose cells are s grid cells
// wide: centre-aligned, in float, as every byte so far was computed.
inline LinearTap LevelTap(int g, float s, int n) { return TapAt((static_cast<float>(g) + 0.5f) / s - 0.5f, n); }

// The column taps of the three levels for every grid column: the same for every grid row, so made
// once (the tap arithmetic was most of a band cell's sampling).
struct LevelColumns {
  std::vector<LinearTap> t0, t1, t2;
};

LevelColumns ColumnTaps(int gw, int w0, int w1, int w2) {
  LevelColumns c;
  c.t0.resize(gw);
  c.t1.resize(gw);
  c.t2.resize(gw);
  for (int i = 0; i < gw; ++i) {
    c.t0[i] = LevelTap(i, 2.f, w0);
    c.t1[i] = LevelTap(i, 8.f, w1);
    c.t2[i] = LevelTap(i, 32.f, w2);
  }
  return c;
}

// Bilinear sample of a level L (lw wide) at the column tap tx and row tap ty: one cell's kCh floats
// as one vector, each lane the scalar expression it always was.
inline void Sample(const float* L, int lw, const LinearTap& tx, const LinearTap& ty, float* out) {
  const float fx = tx.f, fy = ty.f;
  const F32x8 a = LoadVec<F32x8>(&L[(static_cast<size_t>(ty.i0) * lw + tx.i0) * kCh]);
  const F32x8 b = LoadVec<F32x8>(&L[(static_cast<size_t>(ty.i0) * lw + tx.i1) * kCh]);
  const F32x8 c = LoadVec<F32x8>(&L[(static_cast<size_t>(ty.i1) * lw + tx.i0) * kCh]);
  const F32x8 d = LoadVec<F32x8>(&L[(static_cast<size_t>(ty.i1) * lw + tx.i1) * kCh]);
  StoreVec(out, (a * (1 - fx) + b * fx) * (1 - fy) + (c * (1 - fx) + d * fx) * fy);
}

// Per band cell of one grid row: the local colour model, ready for the per-pixel projection. One
// plane per field (field k of cell i at f[k * stride + i]) and `use` as 32-bit lanes (-1 used, 0
// not), so eight cells' values load as one vector; stride ≥ gw + 8, the cells past gw unused.
enum ModelField {
  kBr,
  kBg,
  kBb,  // background colour, 0..1
  kDr,
  kDg,
  kDb,    // F - B
  kInv,   // 1 / |F - B|²
  kConf,  // weight of the colour estimate, 0 = keep the network's alpha
  kModelFields
};

struct RowModels {
  float* f;
  int32_t* use;
  size_t stride;
};

// Step 1 on grid rows [j0, j1) (cells: their averages, 4 floats per cell from row j0): marks the
// uncertain cells in `band` and adds the sure ones to the half-size plane L0 (w0 wide). Returns
// whether any cell was uncertain.
bool ClassifyRows(const float* cells, int gw, int j0, int j1, float lo, float hi, uint8_t* band, float* L0, int w0) {
  bool any_uncertain = false;
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
  return any_uncertain;
}

// The three blurred levels of sure colours.
struct Levels {
  const LevelColumns* columns;
  const float* l0;
  int w0, h0;
  const float* l1;
  int w1, h1;
  const float* l2;
  int w2, h2;
};

// One pixel's alpha from its cell's model: the colour's projection onto the F - B line, weighted
// against the network's alpha by the model's confidence, never crossing 0.5.
inline void ProjectPixel(uint8_t* px, const RowModels& m, int i) {
  const float* f = m.f + i;
  const size_t st = m.stride;
  constexpr float kInv255 = 1.f / 255.f;
  const float t0 = px[0] * kInv255 - f[kBr * st], t1 = px[1] * kInv255 - f[kBg * st],
              t2 = px[2] * kInv255 - f[kBb * st];
  float ac = (t0 * f[kDr * st] + t1 * f[kDg * st] + t2 * f[kDb * st]) * f[kInv * st];
  ac = std::clamp(ac, 0.f, 1.f);
  const float conf = f[kConf * st];
  const float a0 = px[3] * kInv255;
  float v = RoundNonNegative((conf * ac + (1 - conf) * a0) * 255.f);
  // Never cross 0.5: thresholded masks (and the mask metrics) stay exactly as refined.
  v = px[3] >= 128 ? std::max(v, 128.f) : std::min(v, 127.f);
  px[3] = static_cast<uint8_t>(v);
}

#if defined(__AVX2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// ProjectPixel on eight pixels at once (px: pixel x of a row, x + 8 ≤ w; cell_of: from x): eight
// pixels lie in at most eight cells from cell_of[0] on, so each lane's model is one permute of eight
// cells' values; alpha is written in the lanes whose cell is used. No branch per pixel (ProjectPixel's
// clamps mispredict at the band's edges). The same maths as ProjectPixel.
inline void ProjectEight(uint8_t* px, const int* cell_of, const RowModels& m) {
  const int c0 = cell_of[0];
  const __m256i lane_cell =
      _mm256_sub_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(cell_of)), _mm256_set1_epi32(c0));
  const __m256i use =
      _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(m.use + c0)), lane_cell);
  if (_mm256_testz_si256(use, use)) return;
  F32x8 f[kModelFields];
  for (int k = 0; k < kModelFields; ++k)
    f[k] = _mm256_permutevar8x32_ps(_mm256_loadu_ps(m.f + k * m.stride + c0), lane_cell);
  const U32x8 words = LoadVec<U32x8>(px);
  const F32x8 inv255 = F32x8{} + 1.f / 255.f;
  const auto channel = [&](int c) {
    return __builtin_convertvector(reinterpret_cast<I32x8>((words >> (8 * c)) & 0xFFu), F32x8);
  };
  const F32x8 p3 = channel(3);
  const F32x8 t0 = channel(0) * inv255 - f[kBr], t1 = channel(1) * inv255 - f[kBg], t2 = channel(2) * inv255 - f[kBb];
  const F32x8 sum = t0 * f[kDr] + t1 * f[kDg] + t2 * f[kDb];
  F32x8 ac = sum * f[kInv];
  const F32x8 zero = {}, one = zero + 1.f;
  ac = ac < zero ? zero : (one < ac ? one : ac);  // std::clamp
  const F32x8 conf = f[kConf];
  const F32x8 a0 = p3 * inv255;
  const F32x8 v = (conf * ac + (1 - conf) * a0) * 255.f;
  const F32x8 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  F32x8 r = t + (v - t >= 0.5f ? one : zero);  // RoundNonNegative
  const F32x8 lo = zero + 127.f, hi = zero + 128.f;
  r = p3 >= hi ? (r < hi ? hi : r) : (lo < r ? lo : r);  // never cross 0.5
  const U32x8 alpha = reinterpret_cast<U32x8>(__builtin_convertvector(r, I32x8));
  const U32x8 out = (words & 0x00FFFFFFu) | (alpha << 24);
  StoreVec(px, reinterpret_cast<U32x8>(use) ? out : words);
}
#endif

// Step 4 on grid rows [j0, j1): the colour model of each band cell, then the full-res pixels it
// covers (alpha only, of those rows). cell_of: each pixel column's cell; m: one grid row's models.
void ProjectRows(uint8_t* rgba, int w, int gw, const int* cx, const int* cy, const int* cell_of, const uint8_t* band,
                 Levels lv, const MattingParams& p, int j0, int j1, const RowModels& m) {
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const float minw = p.min_support, cmin = p.confidence_min;
  const float crange = std::max(p.confidence_range, 1e-6f);
  const LevelColumns& col = *lv.columns;
  for (int j = j0; j < j1; ++j) {
    const uint8_t* brow = &band[static_cast<size_t>(j) * gw];
    const LinearTap r0 = LevelTap(j, 2.f, lv.h0), r1 = LevelTap(j, 8.f, lv.h1), r2 = LevelTap(j, 32.f, lv.h2);
    int first = gw, last = -1;  // the used cells' span
    for (int i = 0; i < gw; ++i) {
      m.use[i] = 0;
      if (!brow[i]) continue;
      alignas(32) float s0[kCh], s1[kCh], s2[kCh];
      Sample(lv.l0, lv.w0, col.t0[i], r0, s0);
      Sample(lv.l1, lv.w1, col.t1[i], r1, s1);
      Sample(lv.l2, lv.w2, col.t2[i], r2, s2);
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
      const float dr = fb[0] - fb[4], dg = fb[1] - fb[5], db = fb[2] - fb[6];
      const float dd = dr * dr + dg * dg + db * db;
      const float conf = std::clamp((std::sqrt(dd) - cmin) / crange, 0.f, 1.f);
      if (conf <= 0.f) continue;
      const float model[kModelFields] = {fb[4], fb[5], fb[6], dr, dg, db, 1.f / std::max(dd, 1e-6f), conf};
      for (int k = 0; k < kModelFields; ++k) m.f[k * m.stride + i] = model[k];
      m.use[i] = -1;
      first = std::min(first, i);
      last = i;
    }
    if (last < 0) continue;
    const int xa = cx[first], xb = cx[last + 1];
    for (int y = cy[j]; y < cy[j + 1]; ++y) {
      uint8_t* row = rgba + static_cast<size_t>(y) * row_bytes;
      int x = xa;
#if defined(__AVX2__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      for (; x < xb && x + 8 <= w; x += 8) ProjectEight(row + static_cast<size_t>(x) * 4, cell_of + x, m);
#endif
      for (; x < xb; ++x)
        if (m.use[cell_of[x]]) ProjectPixel(row + static_cast<size_t>(x) * 4, m, cell_of[x]);
    }
  }
}

}  // namespace

void MatteByColourModel(uint8_t* rgba, int w, int h, int lw, int lh, const MattingParams& p, int threads) {
  if (!rgba || w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return;
  threads = ClampThreads(threads);
  const float lo = p.sure_bg, hi = p.sure_fg;
  const int gw = std::min(lw, w), gh = std::min(lh, h);
  const size_t gn = static_cast<size_t>(gw) * gh;
  const std::vector<int> cx = CellEdges(w, gw), cy = CellEdges(h, gh);

  // 1. One pass over the photo: mean colour and alpha per grid cell (AreaAverage), classified at once.
  // Uncertain cells are marked; sure ones add their colour to the half-size plane L0 (f·rgb, f, b·rgb,
  // b per half cell). kRowsPerPass grid rows per item (the full grid is never stored); the count is
  // even, so every half-size row belongs to one item and sums in the same order for any thread count.
  static_assert(kRowsPerPass % 2 == 0, "a half-size row must not straddle two items");
  const int w0 = (gw + 1) / 2, h0 = (gh + 1) / 2;
  // Not initialised: each item zeroes its own rows (page faults of a fresh buffer split too).
  ScratchArray<float> L0(static_cast<size_t>(w0) * h0 * kCh);
  std::vector<uint8_t> band(gn);
  const int passes = (gh + kRowsPerPass - 1) / kRowsPerPass;
  std::vector<uint8_t> pass_uncertain(passes, 0);
  {
    std::vector<std::vector<float>> cells(threads);
    ParallelForEach(passes, threads, [&](int worker, int item) {
      cells[worker].resize(static_cast<size_t>(gw) * kRowsPerPass * 4);
      const int j0 = item * kRowsPerPass, j1 = std::min(gh, j0 + kRowsPerPass);
      AreaAverage(rgba, w, cx, cy, 0, gw, j0, j1, cells[worker].data(), gw);
      float* half_rows = L0.get() + static_cast<size_t>(j0 / 2) * w0 * kCh;
      std::fill(half_rows, half_rows + static_cast<size_t>((j1 + 1) / 2 - j0 / 2) * w0 * kCh, 0.f);
      pass_uncertain[item] = ClassifyRows(cells[worker].data(), gw, j0, j1, lo, hi, band.data(), L0.get(), w0);
    });
  }
  if (std::find(pass_uncertain.begin(), pass_uncertain.end(), 1) == pass_uncertain.end()) return;
  for (int y = 0; y < h0; ++y)
    for (int x = 0; x < w0; ++x) {
      const int cnt = (std::min(gw, 2 * x + 2) - 2 * x) * (std::min(gh, 2 * y + 2) - 2 * y);
      float* d = &L0[(static_cast<size_t>(y) * w0 + x) * kCh];
      for (int c = 0; c < kCh; ++c) d[c] /= cnt;
    }

  // 2. Coarser levels (1/8 and 1/32 of the grid), then blur every level at the same σ in its own cells.
  int w1, h1, w2, h2;
  std::vector<float> L1 = Downscale(L0.get(), w0, h0, 4, w1, h1);
  std::vector<float> L2 = Downscale(L1.data(), w1, h1, 4, w2, h2);
  GaussianBlurInPlace<kCh>(L0.get(), w0, h0, p.sigma);
  GaussianBlurInPlace<kCh>(L1.data(), w1, h1, p.sigma);
  GaussianBlurInPlace<kCh>(L2.data(), w2, h2, p.sigma);

  // 3. The band: uncertain cells grown by band_dilate.
  DilateOr(band, gw, gh, std::min(std::max(p.band_dilate, 0), std::max(gw, gh)), threads);

  // 4. Row by row of grid cells: the colour model of each band cell, then the full-res pixels it
  // covers. A grid row reads only the levels and writes only its own pixels' alpha.
  const LevelColumns columns = ColumnTaps(gw, w0, w1, w2);
  const Levels levels{&columns, L0.get(), w0, h0, L1.data(), w1, h1, L2.data(), w2, h2};
  std::vector<int> cell_of(w);
  for (int i = 0; i < gw; ++i) std::fill(cell_of.begin() + cx[i], cell_of.begin() + cx[i + 1], i);
  const size_t stride = static_cast<size_t>(gw) + 8;
  std::vector<std::vector<float>> fields(threads);
  std::vector<std::vector<int32_t>> uses(threads);
  const int grid_rows = std::max(1, static_cast<int>(static_cast<int64_t>(BandRows(w)) * gh / h));
  ParallelForEach((gh + grid_rows - 1) / grid_rows, threads, [&](int worker, int item) {
    fields[worker].resize(stride * kModelFields);
    uses[worker].assign(stride, 0);  // the cells past gw stay unused
    const RowModels m{fields[worker].data(), uses[worker].data(), stride};
    ProjectRows(rgba, w, gw, cx.data(), cy.data(), cell_of.data(), band.data(), levels, p, item * grid_rows,
                std::min(gh, item * grid_rows + grid_rows), m);
  });
}

size_t MattingScratchBytes(int w, int h, int lw, int lh, const MattingParams& p, int threads) {
  if (w <= 0 || h <= 0 || lw <= 0 || lh <= 0) return 0;
  const size_t gw = static_cast<size_t>(std::min(lw, w)), gh = static_cast<size_t>(std::min(lh, h));
  const size_t gn = gw * gh;
  const size_t w0 = (gw + 1) / 2, h0 = (gh + 1) / 2;
  const size_t w1 = (w0 + 3) / 4, h1 = (h0 + 3) / 4;
  const size_t r = static_cast<size_t>(GaussRadius(p.sigma));
  size_t shared = 0;
  shared += gn * 2;                                                                       // band mask + dilation temp
  shared += (w0 * h0 + w1 * h1 + ((w1 + 3) / 4) * ((h1 + 3) / 4)) * kCh * sizeof(float);  // L0, L1, L2
  shared += (gw + gh + 2) * sizeof(int) + (gh + kRowsPerPass - 1) / kRowsPerPass;         // edges, flags
  shared += static_cast<size_t>(w) * sizeof(int);                                         // cell of each column
  shared += 3 * gw * sizeof(LinearTap);                                                   // the levels' column taps
  size_t worker = 0;
  shared += w0 * kCh * sizeof(float) * (3 * (r + 2) + 1);                 // blur: a row, 3 × (column sums + ring)
  worker += AreaSumsScratchBytes(w, gw);                                  // area sums
  worker += gw * kRowsPerPass * 4 * sizeof(float);                        // averaged cells
  worker += (gw + 8) * (kModelFields * sizeof(float) + sizeof(int32_t));  // row models
  return shared + static_cast<size_t>(std::max(threads, 1)) * worker;
}

}  // namespace cutout
