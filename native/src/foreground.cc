// SPDX-License-Identifier: MIT
#include "foreground.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "alpha_scan.h"
#include "grid.h"
#include "parallel.h"
#include "scratch.h"
#include "vec.h"

namespace cutout {
namespace {

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

// The region box-averaged into 4 floats per working pixel (r,g,b,a in 0..1): working cells are s×s
// pixels from the box's corner (the last ones clipped). Working rows are independent, so `threads`
// splits them.
void AverageRegion(const uint8_t* rgba, int w, const Region& g, float* out, int threads) {
  std::vector<int> cx(g.ww + 1), cy(g.wh + 1);
  for (int i = 0; i <= g.ww; ++i) cx[i] = std::min(g.x1, g.x0 + i * g.s);
  for (int j = 0; j <= g.wh; ++j) cy[j] = std::min(g.y1, g.y0 + j * g.s);
  const int rows = std::max(1, BandRows(g.x1 - g.x0) / g.s);  // working rows per item
  // 1 / (255 · pixels) of a whole cell, worked out once (the clipped ones at the edges divide).
  const float whole = 1.f / (255.f * g.s * g.s);
  ParallelForEach((g.wh + rows - 1) / rows, threads, [&](int, int item) {
    AreaSums(rgba, w, cx, cy, 0, g.ww, item * rows, std::min(g.wh, item * rows + rows),
             [&](int j, int i, const auto* sums, int nrows, int ncols) {
               const float inv = nrows == g.s && ncols == g.s ? whole : 1.f / (255.f * nrows * ncols);
               float* o = out + (static_cast<size_t>(j) * g.ww + i) * 4;
               for (int c = 0; c < 4; ++c) o[c] = sums[c] * inv;
             });
  });
}

// Nearest-neighbour resize of a plane of CH floats per pixel (as pymatting between levels): rows
// [y0, y1) of dst; xs: the source column of each destination column.
template <int CH>
void ResizeRows(const float* src, int sw, int sh, float* dst, int dw, int dh, const int* xs, int y0, int y1) {
  for (int y = y0; y < y1; ++y) {
    const int sy = std::min(static_cast<int>(static_cast<int64_t>(y) * sh / dh), sh - 1);
    const float* s = src + static_cast<size_t>(sy) * sw * CH;
    float* d = dst + static_cast<size_t>(y) * dw * CH;
    for (int x = 0; x < dw; ++x)
      std::memcpy(d + static_cast<size_t>(x) * CH, s + static_cast<size_t>(xs[x]) * CH, sizeof(float) * CH);
  }
}

// The source column of each of dw destination columns.
std::vector<int> NearestColumns(int sw, int dw) {
  std::vector<int> xs(dw);
  for (int x = 0; x < dw; ++x) xs[x] = std::min(static_cast<int>(static_cast<int64_t>(x) * sw / dw), sw - 1);
  return xs;
}

// The whole plane; rows are independent, so `threads` splits them.
template <int CH>
void ResizeNearest(const float* src, int sw, int sh, float* dst, int dw, int dh, int threads) {
  const std::vector<int> xs = NearestColumns(sw, dw);
  const int rows = BandRows(dw, 1 << 16);
  ParallelForEach((dh + rows - 1) / rows, threads, [&](int, int item) {
    ResizeRows<CH>(src, sw, sh, dst, dw, dh, xs.data(), item * rows, std::min(dh, item * rows + rows));
  });
}

// Per-pixel 2×2 solve of the sweeps: minimise |a F + (1-a) B - I|² + Σ_n w_n (|F - F_n|² + |B - B_n|²),
// with acc = Σ w_n (F_n, B_n) (one vector: F r,g,b, pad, B r,g,b, pad), W = Σ w_n; into out (the same
// layout). F and B are solved side by side in the two halves of one vector.
inline void Solve(float a0, float W, F32x4 I, F32x8 acc, float* out) {
  const float a1 = 1.f - a0;
  const float a00 = a0 * a0 + W, a11 = a1 * a1 + W, a01 = a0 * a1;
  const float inv_det = 1.f / (W * (a0 * a0 + a1 * a1 + W));  // = a00·a11 − a01², without cancellation
  const F32x8 a = {a0, a0, a0, a0, a1, a1, a1, a1};
  const F32x8 b = a * __builtin_shufflevector(I, I, 0, 1, 2, 3, 0, 1, 2, 3) + acc;  // b0 | b1
  const F32x8 other = __builtin_shufflevector(b, b, 4, 5, 6, 7, 0, 1, 2, 3);        // b1 | b0
  const F32x8 own = {a11, a11, a11, a11, a00, a00, a00, a00};
  const F32x8 fb = (own * b - a01 * other) * inv_det;  // F | B
  const F32x8 zero = {}, one = zero + 1.f;
  StoreVec(out, fb > zero ? (fb < one ? fb : one) : zero);  // NaN → 0
}

// Pixel (x, y) in one Gauss-Seidel sweep (in place, as pymatting) over a level: img 4 floats/px, fb
// 8 floats/px (F r,g,b, pad, B r,g,b, pad). Left and upper neighbours are already this sweep's, right
// and lower ones still the previous sweep's. A neighbour's F and B are one eight-lane vector, summed
// and solved as one: no branch per channel, half the vector work of four-lane F and B.
inline void SweepPixel(const float* img, float* fb, int w, int h, int y, int x, float reg, float gw) {
  const size_t row = static_cast<size_t>(y) * w;
  const size_t up = static_cast<size_t>(y > 0 ? y - 1 : y) * w;
  const size_t dn = static_cast<size_t>(y < h - 1 ? y + 1 : y) * w;
  const size_t xl = x > 0 ? x - 1 : x, xr = x < w - 1 ? x + 1 : x;
  const size_t nb[4] = {row + xl, row + xr, up + x, dn + x};
  const float* c = img + 4 * (row + x);
  const float a0 = c[3];
  F32x8 acc = {};
  float W = 0.f;
  for (int k = 0; k < 4; ++k) {
    const float wk = reg + gw * std::fabs(a0 - img[4 * nb[k] + 3]);
    W += wk;
    acc += wk * LoadVec<F32x8>(fb + 8 * nb[k]);
  }
  Solve(a0, W, LoadVec<F32x4>(c), acc, fb + 8 * (row + x));
}

// Rows [ya, yb) × columns [x0, x1) of one sweep, in bands of `band` rows taken along diagonals: row
// y + k of a band runs k pixels behind row y. Every pixel still sees the neighbours of the row-by-row
// order (left and upper done; right and lower not yet touched, the row below being behind), so the
// bytes are the same. But the pixels solved one after the other are in different rows and do not
// wait for each other, where along a row each waits for its left neighbour's solve (a chain of ~45
// cycles: load, four multiply-adds, the solve, the store). One thread, bands of four: 1 MP foreground
// 12.5 → 9.2 ms (docs/native.md); eight, with F and B as one vector and the sweeps in pairs
// (SweepTwice), helped the threaded wavefront's blocks too (1 MP, two threads, 7.9 →
// 6.5 ms; four-row bands had made it 6% slower when each sweep went over the whole level).
constexpr int kDiagonalRows = 8;

void SweepRows(const float* img, float* fb, int w, int h, int ya, int yb, int x0, int x1, float reg, float gw,
               int band) {
  const int cols = x1 - x0;
  for (int y = ya; y < yb; y += band) {
    const int rows = std::min(band, yb - y);
    for (int t = 0; t < cols + rows - 1; ++t) {
      const int k0 = std::max(0, t - cols + 1), k1 = std::min(rows - 1, t);
      for (int k = k0; k <= k1; ++k) SweepPixel(img, fb, w, h, y + k, x0 + t - k, reg, gw);
    }
  }
}

// The wavefront's steps: blocks of kSweepBlock columns of kSweepRows rows (128 columns: fewer
// hand-overs and diagonal ramps than 64, 1 MP 6.9 → 6.5 ms); and the smallest level worth splitting.
constexpr int kSweepBlock = 128;
constexpr int kSweepRows = 16;
constexpr int kSweepMinPixels = 1 << 15;

// Whether a level's sweeps run as the wavefront below (else on one thread).
bool SweepsInWavefront(int w, int h, int threads) {
  return threads > 1 && h > kSweepRows && w >= 2 * kSweepBlock && static_cast<int64_t>(w) * h >= kSweepMinPixels;
}

// One cache line per group: neighbouring groups run on other cores.
struct alignas(64) SweepProgress {
  std::atomic<int> done{0};  // columns finished by every row of the group
};

// Rows [ya, yb) of one sweep in the wavefront, a block of columns at a time: each block once the
// group above (`above`, none for the first group) has finished it; `own` tells the group below.
void SweepBlocks(const float* img, float* fb, int w, int h, int ya, int yb, float reg, float gw,
                 const SweepProgress* above, SweepProgress& own) {
  for (int x0 = 0; x0 < w; x0 += kSweepBlock) {
    const int x1 = std::min(w, x0 + kSweepBlock);
    if (above)
      while (above->done.load(std::memory_order_acquire) < x1) std::this_thread::yield();
    SweepRows(img, fb, w, h, ya, yb, x0, x1, reg, gw, kDiagonalRows);
    own.done.store(x1, std::memory_order_release);
  }
}

// The rows the second of two paired sweeps runs on for the group [y0, y1): one row behind the first.
inline int SecondSweepBegin(int y0) { return std::max(0, y0 - 1); }
inline int SecondSweepEnd(int y1, int h) { return y1 == h ? h : y1 - 1; }

// One sweep. With threads, as a wavefront over groups of kSweepRows rows: workers claim the groups in
// order, go through a group a block of columns at a time (in diagonal bands of its rows, as SweepRows), and start
// a block only once the group above has finished it. Every pixel then sees exactly the neighbour
// values of the row-by-row sweep (left and upper: this sweep's; right and lower: not yet touched), so
// the result is the same bytes for any thread count. A group only waits for one claimed before it,
// so the wavefront never stalls, even with fewer running workers. Groups, rather than single rows,
// keep the rows that two cores both touch to one in kSweepRows.
void Sweep(const float* img, float* fb, int w, int h, float reg, float gw, int threads) {
  const int groups = (h + kSweepRows - 1) / kSweepRows;
  if (!SweepsInWavefront(w, h, threads)) {
    for (int y = 0; y < h; y += kSweepRows)
      SweepRows(img, fb, w, h, y, std::min(h, y + kSweepRows), 0, w, reg, gw, kDiagonalRows);
    return;
  }
  std::unique_ptr<SweepProgress[]> progress(new SweepProgress[groups]);
  ParallelForEach(groups, threads, [&](int, int g) {
    const int y0 = g * kSweepRows, y1 = std::min(h, y0 + kSweepRows);
    SweepBlocks(img, fb, w, h, y0, y1, reg, gw, g > 0 ? &progress[g - 1] : nullptr, progress[g]);
  });
}

// Two sweeps in one pass over the level, one thread: the second trails the first by a row, a group
// of kSweepRows rows at a time (first sweep on rows [y, y + G), then the second on [y - 1, y + G - 1)).
// The second sweep's pixel reads its lower neighbour after the first sweep has written it and its
// upper one after itself has; the first sweep's pixel reads its upper neighbour before the second
// has touched it: every pixel sees exactly the values of two whole sweeps one after the other (the
// same bytes). The level is read from memory once for both: at 1 MP and up its F,B and image (48
// bytes a pixel) are far larger than the caches.
// ready(n) is called before rows below n are first read (n grows): the level's starting F,B can be
// written row by row just ahead of the sweeps, while those rows are in cache.
template <typename Ready>
void SweepTwice(const float* img, float* fb, int w, int h, float reg, float gw, Ready&& ready) {
  for (int y = 0; y < h; y += kSweepRows) {
    const int y1 = std::min(h, y + kSweepRows);
    ready(std::min(h, y1 + 1));
    SweepRows(img, fb, w, h, y, y1, 0, w, reg, gw, kDiagonalRows);
    SweepRows(img, fb, w, h, SecondSweepBegin(y), SecondSweepEnd(y1, h), 0, w, reg, gw, kDiagonalRows);
  }
}

// SweepTwice with threads, as Sweep's wavefront: a group runs the first sweep on its rows [y0, y1),
// every block, then the second on [y0 - 1, y1 - 1). Its first sweep waits for the group above's
// first sweep (the upper neighbours) and never meets its second (which stops a row short of this
// group); its second waits, block by block, for the group above's second sweep, which must have
// read row y0 - 1's first-sweep values before they are replaced (and has written row y0 - 2). By then
// the group above's first sweep is whole. The same bytes as two whole sweeps, for any thread count.
void SweepTwiceWavefront(const float* img, float* fb, int w, int h, float reg, float gw, int threads) {
  const int groups = (h + kSweepRows - 1) / kSweepRows;
  std::unique_ptr<SweepProgress[]> first(new SweepProgress[groups]), second(new SweepProgress[groups]);
  ParallelForEach(groups, threads, [&](int, int g) {
    const int y0 = g * kSweepRows, y1 = std::min(h, y0 + kSweepRows);
    SweepBlocks(img, fb, w, h, y0, y1, reg, gw, g > 0 ? &first[g - 1] : nullptr, first[g]);
    SweepBlocks(img, fb, w, h, SecondSweepBegin(y0), SecondSweepEnd(y1, h), reg, gw, g > 0 ? &second[g - 1] : nullptr,
                second[g]);
  });
}

// Size of level lv of 0..n_levels along a side of n: the levels grow geometrically from 1 (as pymatting).
int LevelSize(int n, int lv, int n_levels) {
  const double t = n_levels ? static_cast<double>(lv) / n_levels : 1.0;
  return std::max(1, static_cast<int>(std::lround(std::pow(static_cast<double>(n), t))));
}

// Multi-level solve on the working image (ww×wh); returns the finest level's F,B (8 floats per pixel).
// The levels' F,B take turns in two buffers, the finest in `big` (ww×wh), the one below it in `small`
// (sized for the second-finest level, which no coarser level exceeds), and so on down. Neither is
// initialised: ResizeNearest writes every value before a sweep reads it.
ScratchArray<float> SolveMultiLevel(const float* img, int ww, int wh, const ForegroundParams& p, int threads) {
  const int n_levels = std::max(ww, wh) > 1 ? static_cast<int>(std::ceil(std::log2(std::max(ww, wh)))) : 0;
  const size_t below =
      n_levels > 0 ? static_cast<size_t>(LevelSize(ww, n_levels - 1, n_levels)) * LevelSize(wh, n_levels - 1, n_levels)
                   : 1;
  ScratchArray<float> big(static_cast<size_t>(ww) * wh * 8), small(below * 8);
  ScratchArray<float> level_img(below * 4);
  const float zero[8] = {};
  const float* prev = zero;  // the 1×1 start: F = B = 0
  int pw = 1, ph = 1;
  const float reg = std::max(p.regularization, 1e-8f), gw = std::max(p.gradient_weight, 0.f);
  for (int lv = 0; lv <= n_levels; ++lv) {
    const int lw = LevelSize(ww, lv, n_levels), lh = LevelSize(wh, lv, n_levels);
    const float* li = img;
    if (lw != ww || lh != wh) {
      ResizeNearest<4>(img, ww, wh, level_img.get(), lw, lh, threads);
      li = level_img.get();
    }
    float* fb = ((n_levels - lv) % 2 == 0 ? big : small).get();
    const int iters = (lw <= p.small_size && lh <= p.small_size) ? p.small_iterations : p.big_iterations;
    // Sweeps two at a time, in one pass over the level.
    int it = 0;
    if (SweepsInWavefront(lw, lh, threads)) {
      ResizeNearest<8>(prev, pw, ph, fb, lw, lh, threads);
      for (; it + 1 < iters; it += 2) SweepTwiceWavefront(li, fb, lw, lh, reg, gw, threads);
    } else {
      // The previous level's F,B enlarged into this one's rows just ahead of the first two sweeps.
      const std::vector<int> xs = NearestColumns(pw, lw);
      int filled = 0;
      auto fill = [&](int n) {
        if (n <= filled) return;  // (later pairs: every row already has its start)
        ResizeRows<8>(prev, pw, ph, fb, lw, lh, xs.data(), filled, n);
        filled = n;
      };
      for (; it + 1 < iters; it += 2) SweepTwice(li, fb, lw, lh, reg, gw, fill);
      fill(lh);
    }
    for (; it < iters; ++it) Sweep(li, fb, lw, lh, reg, gw, threads);
    prev = fb;
    pw = lw;
    ph = lh;
  }
  return big;
}

// Step 3 of EstimateForeground. Semi-transparent pixels: the same 2×2 solve at full res, with the
// four neighbours' F,B taken from the bilinear-upsampled working solution (one Jacobi step on the
// finest level), so F follows the photo's full-res detail where alpha is high and the smooth
// estimate where it is low.
struct WriteBack {
  uint8_t* rgba;
  int w, h;
  Region g;
  const float* fb;         // working solution, 8 floats per working pixel
  int bx0, bx1, by0, by1;  // semi-transparent box (empty: by1 == by0)
  const int* tx0;          // horizontal taps onto the working grid, per box column
  const int* tx1;
  const float* tfx;
  float reg, gwt;
};

constexpr int kLanes = 8;

// One worker's scratch: a row of the working solution blended for the image row (g.ww · 8 floats),
// and a row's semi-transparent pixels as parallel lists: x, the pixel as a u32 (r in the low byte,
// alpha in the top one) and its alpha's summed differences to its four neighbours. kLanes more
// entries than box columns: a group's compaction stores eight, and the last solve's idle lanes.
struct WriteBackScratch {
  std::vector<float> frow;
  std::vector<int> x, dsum;
  std::vector<uint32_t> px;
};

// Solve's F for eight pixels at once: a0, W, the photo's colour I[c] and the neighbours' F and B
// blended from the working solution, lf[c] and lb[c], per lane. The same maths as Solve (a00 only
// enters B, which is not written back).
inline void SolveForeground8(F32x8 a0, F32x8 W, const F32x8* I, const F32x8* lf, const F32x8* lb, F32x8* f) {
  const F32x8 a1 = 1.f - a0;
  const F32x8 a11 = a1 * a1 + W, a01 = a1 * a0;
  const F32x8 inv_det = 1.f / (W * (a0 * a0 + a1 * a1 + W));
  const F32x8 zero = {}, one = zero + 1.f;
  for (int c = 0; c < 3; ++c) {
    const F32x8 b0 = a0 * I[c] + W * lf[c], b1 = a1 * I[c] + W * lb[c];
    const F32x8 v = (b0 * a11 - b1 * a01) * inv_det;
    f[c] = v > zero ? (v < one ? v : one) : zero;  // NaN → 0, as Solve
  }
}

// The F (lanes 0-2) and B (lanes 4-6) of eight pixels' vectors v[i] as per-channel vectors over the
// pixels: lf[c] lane i = v[i][c], lb[c] lane i = v[i][4 + c]. An 8×8 transpose in shuffles (unpacks,
// then in-lane shuffles, then 128-bit halves), leaving out the padding lanes 3 and 7; the values pass
// through unchanged.
inline void Transpose8(const F32x8* v, F32x8* lf, F32x8* lb) {
  F32x8 t[8], s[6];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * k + 1] = __builtin_shufflevector(v[2 * k], v[2 * k + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int k = 0; k < 2; ++k) {  // s[3k + c]: channels c and 4 + c of pixels 4k..4k+3
    s[3 * k] = __builtin_shufflevector(t[4 * k], t[4 * k + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    s[3 * k + 1] = __builtin_shufflevector(t[4 * k], t[4 * k + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    s[3 * k + 2] = __builtin_shufflevector(t[4 * k + 1], t[4 * k + 3], 0, 1, 8, 9, 4, 5, 12, 13);
  }
  for (int c = 0; c < 3; ++c) {
    lf[c] = __builtin_shufflevector(s[c], s[3 + c], 0, 1, 2, 3, 8, 9, 10, 11);
    lb[c] = __builtin_shufflevector(s[c], s[3 + c], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

#if defined(__AVX2__)
// Lane-index lists for compacting eight lanes by a mask: entry m holds, four bits each from the low
// end, the set lanes of m in increasing order.
constexpr std::array<uint32_t, 256> MakeCompactTable() {
  std::array<uint32_t, 256> t{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int i = 0; i < kLanes; ++i)
      if (m >> i & 1) t[m] |= static_cast<uint32_t>(i) << (4 * k++);
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCompact = MakeCompactTable();

// |a - the alpha of the pixels nb| per lane.
inline I32x8 AbsDiff(I32x8 a, U32x8 nb) {
  const I32x8 d = a - (I32x8)(nb >> 24);
  return d < 0 ? -d : d;
}
#endif

// Rows [ya, yb). wb by value: its fields stay in registers. Colour under alpha 0 is zeroed here
// except in rows ya and yb - 1 (see EstimateForeground).
void WriteBackRows(const WriteBack wb, int ya, int yb, WriteBackScratch& scratch) {
  const int w = wb.w, h = wb.h;
  const Region& g = wb.g;
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  constexpr float kInv255 = 1.f / 255.f;
  float* frow = scratch.frow.data();
  int* xs = scratch.x.data();
  int* ds = scratch.dsum.data();
  uint32_t* pw = scratch.px.data();
  for (int y = ya; y < yb; ++y) {
    uint8_t* row = wb.rgba + static_cast<size_t>(y) * row_bytes;
    if (y >= wb.by0 && y < wb.by1) {
      const uint8_t* up = row - (y > 0 ? row_bytes : 0);
      const uint8_t* dn = row + (y < h - 1 ? row_bytes : 0);
      // 1. The row's semi-transparent pixels listed (x, pixel, alpha differences), with no branch per
      // pixel (6-16% of pixels partial, scattered, mispredicted most of the time): append writes a
      // pixel's entry and keeps it only if it is partial.
      int n = 0, x = wb.bx0;
      auto append = [&](int px_x) {
        const uint8_t* px = row + static_cast<size_t>(px_x) * 4;
        const int xl = px_x > 0 ? px_x - 1 : px_x, xr = px_x < w - 1 ? px_x + 1 : px_x;
        xs[n] = px_x;
        pw[n] = px[0] | px[1] << 8 | px[2] << 16 | static_cast<uint32_t>(px[3]) << 24;
        ds[n] = std::abs(px[3] - row[4 * xl + 3]) + std::abs(px[3] - row[4 * xr + 3]) +
                std::abs(px[3] - up[4 * px_x + 3]) + std::abs(px[3] - dn[4 * px_x + 3]);
        n += AlphaIn(px[3], 1, 254);  // semi-transparent
      };
#if defined(__AVX2__)
      // Eight pixels at a time, as u32 words: their partial lanes as a bit mask (a group without one
      // is stepped over), the differences for all eight, and the partial lanes' entries packed to the
      // front with one permute each. In a band's first and last rows the row above or below is a
      // neighbouring band's, whose colour bytes that band writes meanwhile: there only its alpha
      // bytes are read (append).
      const bool own_rows = y != ya && y != yb - 1;
      const U32x8 shift = {0, 4, 8, 12, 16, 20, 24, 28};
      for (; x + kLanes <= wb.bx1; x += kLanes) {
        const uint8_t* p = row + static_cast<size_t>(x) * 4;
        const U32x8 c = LoadVec<U32x8>(p);
        const int mask = _mm256_movemask_ps((__m256)((c >> 24) - 1 < 254));  // AlphaIn(a, 1, 254)
        if (mask == 0) continue;
        if (!own_rows) {
          for (int i = 0; i < kLanes; ++i) append(x + i);
          continue;
        }
        // The neighbours' alpha, the row's ends repeating as in append.
        const U32x8 l = x > 0 ? LoadVec<U32x8>(p - 4) : __builtin_shufflevector(c, c, 0, 0, 1, 2, 3, 4, 5, 6);
        const U32x8 r = x + kLanes < w ? LoadVec<U32x8>(p + 4) : __builtin_shufflevector(c, c, 1, 2, 3, 4, 5, 6, 7, 7);
        const I32x8 a = (I32x8)(c >> 24);
        const I32x8 d = AbsDiff(a, l) + AbsDiff(a, r) + AbsDiff(a, LoadVec<U32x8>(up + 4 * static_cast<size_t>(x))) +
                        AbsDiff(a, LoadVec<U32x8>(dn + 4 * static_cast<size_t>(x)));
        const __m256i order = (__m256i)((U32x8{} + kCompact[mask]) >> shift & 15);
        StoreVec(xs + n, (I32x8)order + x);
        StoreVec(pw + n, (U32x8)_mm256_permutevar8x32_epi32((__m256i)c, order));
        StoreVec(ds + n, (I32x8)_mm256_permutevar8x32_epi32((__m256i)d, order));
        n += __builtin_popcount(mask);
      }
#endif
      for (; x < wb.bx1; ++x) append(x);
      if (n > 0) {
        // 2. The working rows blended vertically for this image row, once per column it needs.
        const LinearTap ty = TapAt((y - g.y0 + 0.5f) / g.s - 0.5f, g.wh);
        const float fy = ty.f;
        const float* r0 = &wb.fb[static_cast<size_t>(ty.i0) * g.ww * 8];
        const float* r1 = &wb.fb[static_cast<size_t>(ty.i1) * g.ww * 8];
        // Only the working columns this row's partial pixels tap (xs is in increasing order).
        const size_t q0 = static_cast<size_t>(wb.tx0[xs[0] - g.x0]) * 8;
        const size_t q1 = (static_cast<size_t>(wb.tx1[xs[n - 1] - g.x0]) + 1) * 8;
        for (size_t q = q0; q < q1; ++q) frow[q] = r0[q] + (r1[q] - r0[q]) * fy;
        // Idle lanes of the last eight: copies of the last pixel, solved but never stored.
        for (int i = n; i < n + kLanes; ++i) {
          xs[i] = xs[n - 1];
          pw[i] = pw[n - 1];
          ds[i] = ds[n - 1];
        }
        // 3. Eight pixels at a time: alpha, W and colour from the lists in vector lanes, each
        // pixel's blended F,B (one vector) transposed into lanes, the 2×2 solve on all eight at once,
        // and each pixel's three colour bytes stored from one word (not its alpha: a neighbouring
        // band may be reading it).
        const float gk = wb.gwt * kInv255;
        for (int j = 0; j < n; j += kLanes) {
          const U32x8 px = LoadVec<U32x8>(pw + j);
          const F32x8 a0 = __builtin_convertvector((I32x8)(px >> 24), F32x8) * kInv255;
          const F32x8 W = 4.f * wb.reg + gk * __builtin_convertvector(LoadVec<I32x8>(ds + j), F32x8);
          F32x8 I[3], v[kLanes], lf[3], lb[3], f[3];
          for (int c = 0; c < 3; ++c) I[c] = __builtin_convertvector((I32x8)(px >> (8 * c) & 255), F32x8) * kInv255;
          for (int i = 0; i < kLanes; ++i) {
            const int lx = xs[j + i] - g.x0;
            const F32x8 l = LoadVec<F32x8>(&frow[static_cast<size_t>(wb.tx0[lx]) * 8]);
            const F32x8 r = LoadVec<F32x8>(&frow[static_cast<size_t>(wb.tx1[lx]) * 8]);
            v[i] = l + (r - l) * wb.tfx[lx];
          }
          Transpose8(v, lf, lb);
          SolveForeground8(a0, W, I, lf, lb, f);
          U32x8 out = {};
          for (int c = 0; c < 3; ++c) out |= (U32x8) __builtin_convertvector(f[c] * 255.f + 0.5f, I32x8) << (8 * c);
          const int m = std::min(kLanes, n - j);
          for (int i = 0; i < m; ++i) {
            uint8_t* p = row + static_cast<size_t>(xs[j + i]) * 4;
            p[0] = static_cast<uint8_t>(out[i]);
            p[1] = static_cast<uint8_t>(out[i] >> 8);
            p[2] = static_cast<uint8_t>(out[i] >> 16);
          }
        }
      }
    }
    if (y != ya && y != yb - 1) ZeroTransparentRow(row, w);  // RGB 0 under alpha 0: smaller, faster PNGs
  }
}

}  // namespace

void EstimateForeground(uint8_t* rgba, int w, int h, const AlphaRect& partial, const ForegroundParams& p, int threads) {
  if (!rgba || w <= 0 || h <= 0) return;
  threads = ClampThreads(threads);
  const int rows = BandRows(w), bands = (h + rows - 1) / rows;
  // 1. The semi-transparent pixels' bounding box comes from the caller's scan (the solve must see
  // their RGB before step 3 zeroes it).
  // Clamped to the image: the write-back indexes rows and columns by it.
  const int bx0 = std::clamp(partial.x0, 0, w), bx1 = std::clamp(partial.x1, bx0, w);
  const int by0 = std::clamp(partial.y0, 0, h), by1 = std::clamp(partial.y1, by0, h);

  Region g;
  ScratchArray<float> fb;
  const bool has_partial = by1 > by0;
  if (has_partial) {
    // 2. Multi-level solve on the downscaled box.
    g = MakeRegion(w, h, bx0, by0, bx1, by1, p.max_working_pixels);
    ScratchArray<float> img(static_cast<size_t>(g.ww) * g.wh * 4);  // AverageRegion writes all
    AverageRegion(rgba, w, g, img.get(), threads);
    fb = SolveMultiLevel(img.get(), g.ww, g.wh, p, threads);
  }

  // 3. Write back, in bands of rows (a row writes only its own RGB; the alpha it reads never changes).
  LinearTaps tx;  // horizontal taps of the box's columns onto the working grid
  if (has_partial) tx = TapsOf(g.ww, g.x1 - g.x0, [&g](int x) { return (x + 0.5f) / g.s - 0.5f; });
  const WriteBack wb{rgba,
                     w,
                     h,
                     g,
                     fb.get(),
                     bx0,
                     bx1,
                     by0,
                     has_partial ? by1 : by0,
                     tx.i0.data(),
                     tx.i1.data(),
                     tx.f.data(),
                     std::max(p.regularization, 1e-8f),
                     std::max(p.gradient_weight, 0.f)};
  std::vector<WriteBackScratch> scratch(threads);
  ParallelForEach(bands, threads, [&](int worker, int item) {
    if (has_partial) {
      WriteBackScratch& s = scratch[worker];
      const size_t entries = static_cast<size_t>(bx1 - bx0) + kLanes;
      s.frow.resize(static_cast<size_t>(g.ww) * 8);
      s.x.resize(entries);
      s.dsum.resize(entries);
      s.px.resize(entries);
    }
    WriteBackRows(wb, item * rows, std::min(h, item * rows + rows), scratch[worker]);
  });
  // ZeroTransparentRow stores whole pixels, alpha unchanged; a band's first and last rows are the ones
  // whose alpha the neighbouring bands read, so they wait until every band is done.
  for (int item = 0; item < bands; ++item) {
    ZeroTransparentRow(rgba + static_cast<size_t>(item) * rows * w * 4, w);
    const int last = std::min(h, item * rows + rows) - 1;
    if (last != item * rows) ZeroTransparentRow(rgba + static_cast<size_t>(last) * w * 4, w);
  }
}

size_t ForegroundScratchBytes(int w, int h, const ForegroundParams& p, int threads) {
  if (w <= 0 || h <= 0) return 0;
  const Region g = MakeRegion(w, h, 0, 0, w, h, p.max_working_pixels);
  const size_t wn = static_cast<size_t>(g.ww) * g.wh;
  // Working image (16 B) + F,B (32 B) + previous level's F,B and level image (≤ ~¼ size each, but
  // rounding of the geometric level sizes can exceed ¼: count ½), one progress line per working row.
  size_t shared = wn * (16 + 32) + wn / 2 * (32 + 16) + static_cast<size_t>(g.wh) * 64;
  shared += static_cast<size_t>(w) * (2 * sizeof(int) + sizeof(float)) + (static_cast<size_t>(g.ww) + 8) * sizeof(int);
  shared +=
      static_cast<size_t>((h + BandRows(w) - 1) / BandRows(w)) * 8 * sizeof(int);  // the caller's scan: boxes per band
  // Per worker: the area average's sums, one blended row of the working solution, the write-back's
  // lists of a row's semi-transparent pixels (WriteBackScratch).
  const size_t worker = AreaSumsScratchBytes(w, g.ww) + static_cast<size_t>(g.ww) * 8 * sizeof(float) +
                        (static_cast<size_t>(w) + kLanes) * (2 * sizeof(int) + sizeof(uint32_t));
  return shared + static_cast<size_t>(std::max(threads, 1)) * worker;
}

}  // namespace cutout
