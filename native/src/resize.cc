// SPDX-License-Identifier: MIT
#include "resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

#include "parallel.h"
#include "vec.h"

namespace cutout {
namespace {

// Catmull-Rom (a = -0.5), support 2.
inline double Cubic(double x) {
  x = std::fabs(x);
  if (x < 1.0) return (1.5 * x - 2.5) * x * x + 1.0;
  if (x < 2.0) return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0;
  return 0.0;
}

// For each output index: the first input index and `taps` weights (zero-padded to the widest).
struct Taps {
  int taps = 0;
  std::vector<int> first;
  std::vector<float> weight;  // out × taps
};

// Weights per output index over a window of input indices; each index's weight summed once.
struct Window {
  int first;
  std::vector<double> w;
};

// Input indices past the edges are clamped into the image (edge pixels repeated), then the weights
// of one index are summed, so every window stays inside and its weights sum to 1.
// `libvips_enlarge`: libvips' mapping for an enlarged axis, x / scale - 0.5 (half an output pixel
// left of centre-aligned); otherwise pixel centres aligned. `span`: the input's length the output
// covers, in input pixels (0: `in`; after a box shrink by k, the true length / k, a fraction when the
// last box was narrower).
std::vector<Window> Windows(int in, int out, bool libvips_enlarge, double span = 0) {
  const double scale = static_cast<double>(out) / (span > 0 ? span : in);
  const double widen = std::max(1.0, 1.0 / scale);  // antialias when shrinking
  const double support = 2.0 * widen;
  std::vector<Window> ws(out);
  for (int i = 0; i < out; ++i) {
    const double centre = libvips_enlarge ? i / scale - 0.5 : (i + 0.5) / scale - 0.5;
    const int lo = static_cast<int>(std::floor(centre - support)) + 1;
    const int hi = static_cast<int>(std::ceil(centre + support)) - 1;
    const int a = std::clamp(lo, 0, in - 1), b = std::clamp(hi, 0, in - 1);
    Window& win = ws[i];
    win.first = a;
    win.w.assign(b - a + 1, 0.0);
    double sum = 0;
    for (int k = lo; k <= hi; ++k) {
      const double v = Cubic((k - centre) / widen);
      win.w[std::clamp(k, 0, in - 1) - a] += v;
      sum += v;
    }
    for (double& v : win.w) v = sum != 0 ? v / sum : 0;
    if (sum == 0) win.w[0] = 1;
  }
  return ws;
}

// `outer` applied after `inner`: one window per output of outer over inner's input indices.
std::vector<Window> Compose(const std::vector<Window>& outer, const std::vector<Window>& inner) {
  std::vector<Window> ws(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) {
    const Window& o = outer[i];
    int a = 1 << 30, b = -1;
    for (size_t j = 0; j < o.w.size(); ++j) {
      const Window& m = inner[o.first + j];
      a = std::min(a, m.first);
      b = std::max(b, m.first + static_cast<int>(m.w.size()) - 1);
    }
    ws[i].first = a;
    ws[i].w.assign(b - a + 1, 0.0);
    for (size_t j = 0; j < o.w.size(); ++j) {
      const Window& m = inner[o.first + j];
      for (size_t k = 0; k < m.w.size(); ++k) ws[i].w[m.first - a + k] += o.w[j] * m.w[k];
    }
  }
  return ws;
}

// The windows packed at one width (zero-padded), windows moved left where they would pass the end.
Taps Pack(const std::vector<Window>& ws, int in) {
  Taps t;
  for (const Window& w : ws) t.taps = std::max(t.taps, static_cast<int>(w.w.size()));
  t.first.resize(ws.size());
  t.weight.assign(ws.size() * t.taps, 0.f);
  for (size_t i = 0; i < ws.size(); ++i) {
    const int first = std::min(ws[i].first, in - t.taps);
    t.first[i] = first;
    for (size_t k = 0; k < ws[i].w.size(); ++k)
      t.weight[i * t.taps + (ws[i].first - first) + k] = static_cast<float>(ws[i].w[k]);
  }
  return t;
}

// One axis, as sharp's resize (libvips) does it with kernel "cubic": an axis that shrinks is
// reduced; when the other axis is enlarged, libvips then runs its affine interpolator over both
// axes, so a shrunk or unchanged axis also goes through a scale-1 pass at its -0.5 offset (a half
// pixel shift and a slight blur). Matching it keeps the model's input what it was through sharp.
Taps AxisTaps(int in, int out, bool other_enlarged, double span = 0) {
  if (out > in) return Pack(Windows(in, out, true), in);
  std::vector<Window> ws = Windows(in, out, false, span);
  if (other_enlarged) ws = Compose(Windows(out, out, true), ws);
  return Pack(ws, in);
}

// Four floats, one pixel (r, g, b, unused): the horizontal taps are one 4-wide multiply-add each.
typedef F32x4 Px;

// A whole-pixel box shrink before the cubic, as libvips' resize does (its reduce "gap" of 2): an axis
// shrunk by s ≥ 4 is first box-averaged by k = ⌊s / 2⌋, leaving the cubic at least a 2× shrink over
// a k× narrower image, with k× fewer taps. The last box of an axis averages the pixels it has.
struct BoxShrink {
  int kx = 1, ky = 1;  // box factors
  int sw = 0, sh = 0;  // the shrunk size, ⌈w / kx⌉ × ⌈h / ky⌉
};

int BoxFactor(int in, int out) { return out < in ? std::max(1, static_cast<int>(std::floor(in / (2.0 * out)))) : 1; }

BoxShrink BoxShrinkFor(int w, int h, int dw, int dh) {
  BoxShrink b;
  b.kx = BoxFactor(w, dw);
  b.ky = BoxFactor(h, dh);
  b.sw = (w + b.kx - 1) / b.kx;
  b.sh = (h + b.ky - 1) / b.ky;
  return b;
}

// One pixel's r, g, b widened to floats, in lanes 0-2. Lane 3 is never read (StoreRgb writes lanes
// 0-2), so an RGBA pixel is widened whole, alpha and all, in one load and convert.
template <int CH>
inline Px Widen(const uint8_t* p) {
  if constexpr (CH == 4) {
#if defined(__SSE4_1__)
    // GCC lowers the vector-extension u8 → float conversion to four scalar ones; this is one each.
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(v)));
#else
    return __builtin_convertvector(__builtin_convertvector(LoadVec<U8x4>(p), I32x4), Px);
#endif
  } else {
    return Px{static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2]), 0.f};
  }
}

// One input row's boxes of kx pixels (K: kx known at compile time, 0: at run time) summed into acc
// (b.sw pixels; `first`: stored, not added). Sums of bytes are exact in floats, in any order.
template <int CH, int K>
void BoxColumns(const uint8_t* row, int w, const BoxShrink& b, bool first, Px* acc) {
  const int kx = K ? K : b.kx, whole = w / kx;
  for (int x = 0; x < whole; ++x) {
    const uint8_t* p = row + static_cast<size_t>(x) * kx * CH;
    Px s = Widen<CH>(p);
    for (int i = 1; i < kx; ++i) s += Widen<CH>(p + i * CH);
    acc[x] = first ? s : acc[x] + s;
  }
  if (whole < b.sw) {  // the last, narrower box
    Px s = {0.f, 0.f, 0.f, 0.f};
    for (int i = whole * kx; i < w; ++i) s += Widen<CH>(row + static_cast<size_t>(i) * CH);
    acc[whole] = first ? s : acc[whole] + s;
  }
}

// Shrunk row sy widened to floats (alpha dropped) into row4 (b.sw pixels): the box average of input
// rows [sy·ky, sy·ky + ky) and columns [x·kx, x·kx + kx).
template <int CH>
void BoxRow(const uint8_t* src, int w, int h, const BoxShrink& b, int sy, Px* row4) {
  const size_t stride = static_cast<size_t>(w) * CH;
  const int y0 = sy * b.ky, rows = std::min(h, y0 + b.ky) - y0;
  const uint8_t* top = src + static_cast<size_t>(y0) * stride;
  if (b.kx == 1 && rows == 1) {
    for (int x = 0; x < w; ++x) row4[x] = Widen<CH>(top + static_cast<size_t>(x) * CH);
    return;
  }
  for (int j = 0; j < rows; ++j) {
    const uint8_t* row = top + j * stride;
    switch (b.kx) {  // the common factors unrolled
      case 1: BoxColumns<CH, 1>(row, w, b, j == 0, row4); break;
      case 2: BoxColumns<CH, 2>(row, w, b, j == 0, row4); break;
      case 3: BoxColumns<CH, 3>(row, w, b, j == 0, row4); break;
      default: BoxColumns<CH, 0>(row, w, b, j == 0, row4);
    }
  }
  const int whole = w / b.kx;
  const float inv = 1.f / static_cast<float>(rows * b.kx);
  for (int x = 0; x < whole; ++x) row4[x] *= inv;
  if (whole < b.sw) row4[whole] *= 1.f / static_cast<float>(rows * (w - whole * b.kx));
}

// One shrunk row resampled horizontally: dw pixels. `row4` is b.sw pixels of scratch.
void RowPass(const uint8_t* src, int w, int h, int channels, const BoxShrink& b, int sy, const Taps& tx, int dw,
             Px* row4, Px* out) {
  if (channels == 4)
    BoxRow<4>(src, w, h, b, sy, row4);
  else
    BoxRow<3>(src, w, h, b, sy, row4);
  const int n = tx.taps;
  const float* __restrict weights = tx.weight.data();
  const int* __restrict first = tx.first.data();
  // Four output pixels at a time: four independent sums, so the multiply-adds overlap instead of
  // each waiting for the one before (one sum alone is bound by the add's latency: ~2x slower). Each
  // pixel's sum still runs over its taps in order, so the bytes are those of one pixel at a time.
  int x = 0;
  for (; x + 4 <= dw; x += 4) {
    const Px* __restrict p0 = row4 + first[x];
    const Px* __restrict p1 = row4 + first[x + 1];
    const Px* __restrict p2 = row4 + first[x + 2];
    const Px* __restrict p3 = row4 + first[x + 3];
    const float* __restrict w0 = weights + static_cast<size_t>(x) * n;
    const float* __restrict w1 = w0 + n;
    const float* __restrict w2 = w1 + n;
    const float* __restrict w3 = w2 + n;
    Px a0 = {0.f, 0.f, 0.f, 0.f}, a1 = a0, a2 = a0, a3 = a0;
    for (int k = 0; k < n; ++k) {
      a0 += w0[k] * p0[k];
      a1 += w1[k] * p1[k];
      a2 += w2[k] * p2[k];
      a3 += w3[k] * p3[k];
    }
    out[x] = a0;
    out[x + 1] = a1;
    out[x + 2] = a2;
    out[x + 3] = a3;
  }
  for (; x < dw; ++x) {
    const Px* __restrict p = row4 + first[x];
    const float* __restrict wt = weights + static_cast<size_t>(x) * n;
    Px acc = {0.f, 0.f, 0.f, 0.f};
    for (int k = 0; k < n; ++k) acc += wt[k] * p[k];
    out[x] = acc;
  }
}

// Rounded to bytes as (v <= 0 ? 0 : v >= 255 ? 255 : v + 0.5) truncated, four lanes at once.
inline void StoreRgb(Px v, uint8_t* o) {
  const Px zero = {0.f, 0.f, 0.f, 0.f}, top = {255.f, 255.f, 255.f, 255.f}, half = {.5f, .5f, .5f, .5f};
  v = v < zero ? zero : v;  // lane-wise selects (vector extension ternaries)
  v = v > top ? top : v;
  const I32x4 b = __builtin_convertvector(v + half, I32x4);
  o[0] = static_cast<uint8_t>(b[0]);
  o[1] = static_cast<uint8_t>(b[1]);
  o[2] = static_cast<uint8_t>(b[2]);
}

// Output rows [ya, yb). Horizontally resampled (shrunk) rows are kept in a ring of ty.taps rows: the
// windows move down monotonically, so each is resampled once per call. Each output pixel then sums
// its column of the ring rows in tap order, in registers.
void Rows(const uint8_t* src, int w, int h, int channels, const BoxShrink& b, uint8_t* dst, int dw, const Taps& tx,
          const Taps& ty, int ya, int yb) {
  const int n = ty.taps;
  std::vector<Px> ring(static_cast<size_t>(n) * dw), row4(b.sw);
  std::vector<int> held(n, -1);  // which shrunk row each ring slot holds
  std::vector<const Px*> rows(n);
  std::vector<float> wts(n);
  for (int y = ya; y < yb; ++y) {
    const int first = ty.first[y];
    const float* wt = &ty.weight[static_cast<size_t>(y) * n];
    int used = 0;  // taps with a weight: a zero weight adds nothing to any sum
    for (int k = 0; k < n; ++k) {
      if (wt[k] == 0.f) continue;
      const int sy = first + k;
      Px* r = &ring[static_cast<size_t>(sy % n) * dw];
      if (held[sy % n] != sy) {
        RowPass(src, w, h, channels, b, sy, tx, dw, row4.data(), r);
        held[sy % n] = sy;
      }
      rows[used] = r;
      wts[used] = wt[k];
      ++used;
    }
    uint8_t* o = dst + static_cast<size_t>(y) * dw * 3;
    if (used == 4) {  // the enlarged axis' cubic: the common case, unrolled
      const Px *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3];
      const float f0 = wts[0], f1 = wts[1], f2 = wts[2], f3 = wts[3];
      for (int x = 0; x < dw; ++x) {
        Px a = {0.f, 0.f, 0.f, 0.f};
        a += f0 * r0[x];
        a += f1 * r1[x];
        a += f2 * r2[x];
        a += f3 * r3[x];
        StoreRgb(a, o + 3 * x);
      }
    } else {  // a shrunk axis: many taps. Eight pixels at a time, so each ring row's pointer and
              // weight are loaded once per eight sums rather than once per pixel (same order per pixel).
      constexpr int kGroup = 8;
      int x = 0;
      for (; x + kGroup <= dw; x += kGroup) {
        Px a[kGroup] = {};
        for (int k = 0; k < used; ++k) {
          const Px* __restrict r = rows[k] + x;
          const float f = wts[k];
          for (int i = 0; i < kGroup; ++i) a[i] += f * r[i];
        }
        for (int i = 0; i < kGroup; ++i) StoreRgb(a[i], o + 3 * (x + i));
      }
      for (; x < dw; ++x) {
        Px a = {0.f, 0.f, 0.f, 0.f};
        for (int k = 0; k < used; ++k) a += wts[k] * rows[k][x];
        StoreRgb(a, o + 3 * x);
      }
    }
  }
}

}  // namespace

void ResizeToRgb(const uint8_t* src, int w, int h, int channels, uint8_t* dst, int dw, int dh, int threads) {
  if (!src || !dst || w <= 0 || h <= 0 || dw <= 0 || dh <= 0 || (channels != 3 && channels != 4)) return;
  const BoxShrink b = BoxShrinkFor(w, h, dw, dh);
  // The residual reduce scales by (w / kx) / dw, as libvips' does, not by ⌈w / kx⌉ / dw.
  const Taps tx = AxisTaps(b.sw, dw, dh > h, static_cast<double>(w) / b.kx);
  const Taps ty = AxisTaps(b.sh, dh, dw > w, static_cast<double>(h) / b.ky);
  // Bands of output rows: each re-reads the few input rows at its top edge, so the bytes are the
  // same whatever the split.
  const int rows = std::max(32, BandRows(dw, 1 << 16));
  ParallelForEach((dh + rows - 1) / rows, ClampThreads(threads), [&](int, int item) {
    Rows(src, w, h, channels, b, dst, dw, tx, ty, item * rows, std::min(dh, item * rows + rows));
  });
}

}  // namespace cutout
