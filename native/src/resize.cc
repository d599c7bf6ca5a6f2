// SPDX-License-Identifier: MIT
#include "resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
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

// Four floats, one pixel (r, g, b, unused): each tap is one 4-wide multiply-add per pixel.
typedef F32x4 Px;

// Two Px in one 256-bit vector: the same pixel of two input rows in the horizontal pass (the rows
// share every tap and weight), two neighbouring pixels of a row in the vertical pass. Each half
// computes what a Px computed alone, in the same order, so the bytes are those of one pixel at a time.
typedef F32x8 Px2;

inline Px2 Join(Px lo, Px hi) { return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7); }
inline Px Low(Px2 v) { return __builtin_shufflevector(v, v, 0, 1, 2, 3); }
inline Px High(Px2 v) { return __builtin_shufflevector(v, v, 4, 5, 6, 7); }

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

// One pixel's bytes widened to integers, r, g, b in lanes 0-2. Lane 3 is never read (StoreRgb writes
// lanes 0-2), so every pixel is loaded as 4 bytes: an RGBA pixel's alpha, or the next RGB pixel's red,
// which is past the photo's end for its last pixel: `WidenLast` is for the last box of a row.
template <int CH>
inline I32x4 Widen(const uint8_t* p) {
#if defined(__SSE4_1__)
  // GCC lowers the vector-extension u8 → i32 conversion to four scalar ones; this is one instruction.
  int32_t v;
  std::memcpy(&v, p, 4);
  return reinterpret_cast<I32x4>(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(v)));
#else
  return __builtin_convertvector(LoadVec<U8x4>(p), I32x4);
#endif
}

inline I32x4 WidenLast(const uint8_t* p) { return I32x4{p[0], p[1], p[2], 0}; }

// Two neighbouring pixels widened as Widen does, side by side. Reads 8 bytes: for RGB, two past the
// second pixel (a third pixel must follow).
template <int CH>
inline I32x8 Widen2(const uint8_t* p) {
#if defined(__AVX2__)
  __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (CH == 3) v = _mm_shuffle_epi8(v, _mm_setr_epi8(0, 1, 2, 3, 3, 4, 5, 6, -1, -1, -1, -1, -1, -1, -1, -1));
  return reinterpret_cast<I32x8>(_mm256_cvtepu8_epi32(v));
#else
  return __builtin_shufflevector(Widen<CH>(p), Widen<CH>(p + CH), 0, 1, 2, 3, 4, 5, 6, 7);
#endif
}

// Shrunk rows sa and sb side by side in row2 (b.sw pixels): each the box average of its input rows
// [sy·ky, sy·ky + ky) and columns [x·kx, x·kx + kx), alpha dropped (K: kx known at compile time, 0: at
// run time). A box's row of kx bytes is summed in integers (at most 65536 · 255 with the binding's
// widths: exact in a float too, so the same value as adding floats), then rows are added as floats in
// order, as before, and scaled by 1 / the box's pixel count.
template <int CH, int K, bool TALL>
void BoxPair(const uint8_t* src, int w, int h, const BoxShrink& b, int sa, int sb, Px2* row2) {
  const size_t stride = static_cast<size_t>(w) * CH;
  const int kx = K ? K : b.kx;
  const int ya = sa * b.ky, na = std::min(h, ya + b.ky) - ya;
  const int yb = sb * b.ky, nb = std::min(h, yb + b.ky) - yb;
  const uint8_t* top_a = src + static_cast<size_t>(ya) * stride;
  const uint8_t* top_b = src + static_cast<size_t>(yb) * stride;
  const auto box = [&](const uint8_t* top, int rows, size_t at, int cols, auto widen) {
    const auto row = [&](const uint8_t* p) {
      I32x4 s = widen(p);
      for (int i = 1; i < cols; ++i) s += widen(p + i * CH);
      return __builtin_convertvector(s, Px);
    };
    Px acc = row(top + at);
    if constexpr (TALL)
      for (int j = 1; j < rows; ++j) acc += row(top + j * stride + at);
    return acc;
  };
  const auto widen = [](const uint8_t* p) { return Widen<CH>(p); };
  const auto widen_last = [](const uint8_t* p) { return WidenLast(p); };
  const auto inv = [](int rows, int cols) {
    const float a = 1.f / static_cast<float>(rows * cols);
    return Px{a, a, a, a};
  };
  const Px2 scale = Join(inv(na, kx), inv(nb, kx));
  const int last = b.sw - 1, tail = w - last * kx;  // the last box: maybe narrower
  int x = 0;
  if constexpr (K == 1 || K == 2) {
    // Boxes of 1 or 2 pixels across: a pixel of each shrunk row per 128-bit half, as the horizontal
    // pass wants them, from 256-bit loads of two neighbouring pixels. Input rows are added as `box`
    // adds them (na == nb but where one of the two is the last, shorter box).
    const auto lows = [](I32x8 a, I32x8 c) { return __builtin_shufflevector(a, c, 0, 1, 2, 3, 8, 9, 10, 11); };
    const auto highs = [](I32x8 a, I32x8 c) { return __builtin_shufflevector(a, c, 4, 5, 6, 7, 12, 13, 14, 15); };
    const auto both = [&](I32x8 a, I32x8 c) { return lows(a, c) + highs(a, c); };
    const auto summed = [&](size_t at, auto pick) {
      Px2 acc = __builtin_convertvector(pick(Widen2<CH>(top_a + at), Widen2<CH>(top_b + at)), Px2);
      if constexpr (TALL)
        for (int j = 1; j < na; ++j)
          acc += __builtin_convertvector(pick(Widen2<CH>(top_a + j * stride + at), Widen2<CH>(top_b + j * stride + at)),
                                         Px2);
      return TALL || K != 1 ? acc * scale : acc;  // one pixel: no scale
    };
    if (na == nb) {
      for (; x + 2 <= last && K == 1; x += 2) {
        row2[x] = summed(x * CH, lows);
        row2[x + 1] = summed(x * CH, highs);
      }
      for (; x < last && K == 2; ++x) row2[x] = summed(2 * x * CH, both);
    }
  }
  for (; x < last; ++x) {
    const size_t at = static_cast<size_t>(x) * kx * CH;
    row2[x] = Join(box(top_a, na, at, kx, widen), box(top_b, nb, at, kx, widen)) * scale;
  }
  const size_t at = static_cast<size_t>(last) * kx * CH;
  row2[last] =
      Join(box(top_a, na, at, tail, widen_last) * inv(na, tail), box(top_b, nb, at, tail, widen_last) * inv(nb, tail));
}

// Output pixels per group of the horizontal pass: eight independent sums, so the multiply-adds overlap
// instead of each waiting for the one before.
constexpr int kGroup = 8;

// The horizontal taps regrouped: for each group of kGroup output pixels, tap k's kGroup weights side by
// side, so one pointer walks the weights of the whole group. Padded to whole groups (an even number of
// them, for the vertical pass' 16 pixels at a time) with pixels of zero weights at index 0.
struct GroupedTaps {
  int taps = 0, groups = 0;
  std::vector<int> first;     // groups × kGroup
  std::vector<float> weight;  // groups × taps × kGroup
};

GroupedTaps Group(const Taps& t, int out) {
  GroupedTaps g;
  g.taps = t.taps;
  g.groups = (out + 2 * kGroup - 1) / (2 * kGroup) * 2;
  g.first.assign(static_cast<size_t>(g.groups) * kGroup, 0);
  g.weight.assign(static_cast<size_t>(g.groups) * kGroup * t.taps, 0.f);
  for (int x = 0; x < out; ++x) {
    g.first[x] = t.first[x];
    float* w = &g.weight[static_cast<size_t>(x / kGroup) * kGroup * t.taps + x % kGroup];
    for (int k = 0; k < t.taps; ++k) w[k * kGroup] = t.weight[static_cast<size_t>(x) * t.taps + k];
  }
  return g;
}

// One tap's kGroup weights, each broadcast to a whole Px2. On x86 from two 128-bit loads, shuffled
// in-lane: with eight broadcast loads beside the eight loads of pixels, loads bounded the taps loop
// (a quarter slower).
inline void GroupWeights(const float* wt, Px2* f) {
#if defined(__AVX__)
  const __m256 lo = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(wt));
  const __m256 hi = _mm256_broadcast_ps(reinterpret_cast<const __m128*>(wt + 4));
  f[0] = reinterpret_cast<Px2>(_mm256_permute_ps(lo, 0x00));
  f[1] = reinterpret_cast<Px2>(_mm256_permute_ps(lo, 0x55));
  f[2] = reinterpret_cast<Px2>(_mm256_permute_ps(lo, 0xaa));
  f[3] = reinterpret_cast<Px2>(_mm256_permute_ps(lo, 0xff));
  f[4] = reinterpret_cast<Px2>(_mm256_permute_ps(hi, 0x00));
  f[5] = reinterpret_cast<Px2>(_mm256_permute_ps(hi, 0x55));
  f[6] = reinterpret_cast<Px2>(_mm256_permute_ps(hi, 0xaa));
  f[7] = reinterpret_cast<Px2>(_mm256_permute_ps(hi, 0xff));
#else
  for (int j = 0; j < kGroup; ++j) f[j] = Px2{wt[j], wt[j], wt[j], wt[j], wt[j], wt[j], wt[j], wt[j]};
#endif
}

// Shrunk rows sy and sy + 1 (the last row again past the end) resampled horizontally together into
// out_a and out_b (tx.groups × kGroup pixels each). `row2` is b.sw pixel pairs of scratch.
void RowPair(const uint8_t* src, int w, int h, int channels, const BoxShrink& b, int sy, const GroupedTaps& tx,
             Px2* row2, Px* out_a, Px* out_b) {
  const int sb = std::min(sy + 1, b.sh - 1);
  const auto box = [&](auto ch) {
    constexpr int CH = decltype(ch)::value;
    if (b.ky > 1) {  // a tall box: 2 pixels across is the common one (a 4500 × 4099 photo)
      if (b.kx == 2)
        BoxPair<CH, 2, true>(src, w, h, b, sy, sb, row2);
      else
        BoxPair<CH, 0, true>(src, w, h, b, sy, sb, row2);
      return;
    }
    switch (b.kx) {  // the common factors unrolled
      case 1:
        BoxPair<CH, 1, false>(src, w, h, b, sy, sb, row2);
        break;
      case 2:
        BoxPair<CH, 2, false>(src, w, h, b, sy, sb, row2);
        break;
      case 3:
        BoxPair<CH, 3, false>(src, w, h, b, sy, sb, row2);
        break;
      default:
        BoxPair<CH, 0, false>(src, w, h, b, sy, sb, row2);
    }
  };
  if (channels == 4)
    box(std::integral_constant<int, 4>());
  else
    box(std::integral_constant<int, 3>());
  // The next pair's input rows are fetched into the cache while the taps run: read when this pair
  // is due, a 12 MP photo's rows stall on memory (the loads came faster than the hardware prefetch).
  const size_t stride = static_cast<size_t>(w) * channels;
  const size_t next = std::min(static_cast<size_t>(sy + 2) * b.ky, static_cast<size_t>(h)) * stride;
  const size_t ahead = std::min(static_cast<size_t>(sy + 4) * b.ky, static_cast<size_t>(h)) * stride - next;
  const size_t lines = (ahead / 64 + tx.groups) / tx.groups;  // cache lines per group
  const uint8_t* fetch = src + next;
  const uint8_t* const fetch_end = src + next + ahead;
  const int n = tx.taps;
  for (int g = 0; g < tx.groups; ++g) {
    for (size_t i = 0; i < lines && fetch < fetch_end; ++i, fetch += 64) __builtin_prefetch(fetch);
    const int* first = &tx.first[static_cast<size_t>(g) * kGroup];
    const float* __restrict wt = &tx.weight[static_cast<size_t>(g) * kGroup * n];
    const Px2* __restrict p[kGroup];
    for (int j = 0; j < kGroup; ++j) p[j] = row2 + first[j];
    Px2 a[kGroup] = {};
    for (int k = 0; k < n; ++k, wt += kGroup) {
      Px2 f[kGroup];
      GroupWeights(wt, f);
      for (int j = 0; j < kGroup; ++j) a[j] += f[j] * p[j][k];
    }
    for (int j = 0; j < kGroup; ++j) {
      out_a[g * kGroup + j] = Low(a[j]);
      out_b[g * kGroup + j] = High(a[j]);
    }
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

// Eight pixels (four pairs) rounded as StoreRgb does, their first `count` written as RGB.
inline void StoreRgb8(const Px2* a, uint8_t* o, int count) {
#if defined(__AVX2__)
  const __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.f), half = _mm256_set1_ps(.5f);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    // maxps(x, y) is x > y ? x : y and minps(x, y) x < y ? x : y: StoreRgb's selects, one instruction each.
    const __m256 v = _mm256_min_ps(top, _mm256_max_ps(zero, reinterpret_cast<__m256>(a[i])));
    q[i] = _mm256_cvttps_epi32(_mm256_add_ps(v, half));
  }
  // 0..255 in every lane, so the saturating packs are exact. They work per 128-bit half: the pixels
  // come out as dwords 0 2 4 6 | 1 3 5 7, put in order, then each one's fourth byte dropped.
  const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  const __m256i px = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  const __m256i rgb = _mm256_shuffle_epi8(px, _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
                                                               0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
  const __m256i packed = _mm256_permutevar8x32_epi32(rgb, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7));
  if (count == 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm256_castsi256_si128(packed));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o + 16), _mm256_extracti128_si256(packed, 1));
  } else {
    uint8_t tmp[32];
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(tmp), packed);
    std::memcpy(o, tmp, 3 * count);
  }
#else
  for (int i = 0; i < count; ++i) StoreRgb(i % 2 ? High(a[i / 2]) : Low(a[i / 2]), o + 3 * i);
#endif
}

// Output rows [ya, yb). Horizontally resampled rows are kept in a ring of ty.taps + 1 rows: the windows
// move down monotonically, so each row is resampled once per call, two at a time (the second row's
// slot held the row ty.taps above the first, which no output row from here on reads). Each output
// pixel then sums its column of the ring rows in tap order, in registers.
void Rows(const uint8_t* src, int w, int h, int channels, const BoxShrink& b, uint8_t* dst, int dw,
          const GroupedTaps& tx, const Taps& ty, int ya, int yb) {
  const int n = ty.taps, slots = n + 1, width = tx.groups * kGroup;
  std::vector<Px> ring(static_cast<size_t>(slots) * width);
  std::vector<Px2> row2(b.sw);
  std::vector<int> held(slots, -1);  // which shrunk row each ring slot holds
  std::vector<const float*> rows(n);
  std::vector<float> wts(n);
  const auto slot = [&](int sy) { return &ring[static_cast<size_t>(sy % slots) * width]; };
  for (int y = ya; y < yb; ++y) {
    const int first = ty.first[y];
    const float* wt = &ty.weight[static_cast<size_t>(y) * n];
    int used = 0;  // taps with a weight: a zero weight adds nothing to any sum
    for (int k = 0; k < n; ++k) {
      if (wt[k] == 0.f) continue;
      const int sy = first + k;
      if (held[sy % slots] != sy) {
        RowPair(src, w, h, channels, b, sy, tx, row2.data(), slot(sy), slot(sy + 1));
        held[sy % slots] = sy;
        held[(sy + 1) % slots] = sy + 1;
      }
      rows[used] = reinterpret_cast<const float*>(slot(sy));
      wts[used] = wt[k];
      ++used;
    }
    // Sixteen pixels at a time: eight independent sums of two pixels, each ring row's weight loaded
    // once per sixteen pixels (the ring rows are padded to that).
    uint8_t* o = dst + static_cast<size_t>(y) * dw * 3;
    for (int x = 0; x < dw; x += 16) {
      Px2 a[8] = {};
      for (int k = 0; k < used; ++k) {
        const float* __restrict r = rows[k] + 4 * x;
        const float f = wts[k];
        for (int i = 0; i < 8; ++i) a[i] += f * LoadVec<Px2>(r + 8 * i);
      }
      StoreRgb8(a, o + 3 * x, std::min(8, dw - x));
      if (dw - x > 8) StoreRgb8(a + 4, o + 3 * (x + 8), std::min(8, dw - x - 8));
    }
  }
}

}  // namespace

void ResizeToRgb(const uint8_t* src, int w, int h, int channels, uint8_t* dst, int dw, int dh, int threads) {
  if (!src || !dst || w <= 0 || h <= 0 || dw <= 0 || dh <= 0 || (channels != 3 && channels != 4)) return;
  const BoxShrink b = BoxShrinkFor(w, h, dw, dh);
  // The residual reduce scales by (w / kx) / dw, as libvips' does, not by ⌈w / kx⌉ / dw.
  const GroupedTaps tx = Group(AxisTaps(b.sw, dw, dh > h, static_cast<double>(w) / b.kx), dw);
  const Taps ty = AxisTaps(b.sh, dh, dw > w, static_cast<double>(h) / b.ky);
  // Bands of output rows: each re-reads the few input rows at its top edge, so the bytes are the
  // same whatever the split.
  const int rows = std::max(32, BandRows(dw, 1 << 16));
  ParallelForEach((dh + rows - 1) / rows, ClampThreads(threads), [&](int, int item) {
    Rows(src, w, h, channels, b, dst, dw, tx, ty, item * rows, std::min(dh, item * rows + rows));
  });
}

}  // namespace cutout
