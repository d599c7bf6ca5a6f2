// SPDX-License-Identifier: MIT
#include "grid.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "parallel.h"

namespace cutout {
namespace {
constexpr int kSmallCells = 16;  // pixels in a cell
}  // namespace

std::vector<int> CellEdges(int n_src, int n_dst) {
  std::vector<int> e(n_dst + 1);
  for (int i = 0; i <= n_dst; ++i) e[i] = static_cast<int>(static_cast<int64_t>(i) * n_src / n_dst);
  return e;
}

void AreaAverage(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
                 int gy0, int gy1, float* G, int gw) {
  // 1 / (255 · pixels) for the small cells that make up most grids, worked out once: a division per
  // cell would hold up the stores behind it. The same value as computed per cell.
  double small_inv[kSmallCells + 1];
  for (int n = 1; n <= kSmallCells; ++n) small_inv[n] = 1.0 / (255.0 * n);
  AreaSums(rgba, w, cx, cy, gx0, gx1, gy0, gy1, [&](int j, int i, const auto* sums, int rows, int cols) {
    const int64_t n = static_cast<int64_t>(rows) * cols;
    const double inv = n <= kSmallCells ? small_inv[n] : 1.0 / (255.0 * rows * cols);
    float* o = G + (static_cast<size_t>(j - gy0) * gw + i) * 4;
    // Through signed integers: x86 before AVX-512 converts only those to double in vectors. Both
    // kinds of sums (u32 below 2^24, u64 below 2^53) convert exactly either way.
    if constexpr (sizeof(*sums) == 4) {
      for (int c = 0; c < 4; ++c) o[c] = static_cast<float>(static_cast<double>(static_cast<int32_t>(sums[c])) * inv);
    } else {
      for (int c = 0; c < 4; ++c) o[c] = static_cast<float>(static_cast<double>(static_cast<int64_t>(sums[c])) * inv);
    }
  });
}

LinearTaps StretchTaps(int n_src, int n_dst) {
  const double scale = static_cast<double>(n_src) / n_dst;
  return TapsOf(n_src, n_dst, [scale](int d) { return (d + 0.5) * scale - 0.5; });
}

int GaussRadius(float sigma) {
  return std::max(1, static_cast<int>(std::lround((std::sqrt(4.0 * sigma * sigma + 1.0) - 1.0) / 2.0)));
}

namespace {
// Rows [j0, j1) of the horizontal pass, m → t. Plain parameters, not lambda captures: they keep the
// loop bounds in registers, so the byte loops vectorise.
void DilateRowsH(const uint8_t* m, uint8_t* t, int gw, int k, int j0, int j1) {
  for (int j = j0; j < j1; ++j) {
    const uint8_t* __restrict s = m + static_cast<size_t>(j) * gw;
    uint8_t* __restrict d = t + static_cast<size_t>(j) * gw;
    std::memcpy(d, s, gw);
    for (int o = 1; o <= k && o < gw; ++o) {  // shifted ORs: whole-row vector ops
      for (int i = 0; i < gw - o; ++i) d[i] |= s[i + o];
      for (int i = o; i < gw; ++i) d[i] |= s[i - o];
    }
  }
}

// Rows [j0, j1) of the vertical pass, t → m.
void DilateRowsV(const uint8_t* t, uint8_t* m, int gw, int gh, int k, int j0, int j1) {
  for (int j = j0; j < j1; ++j) {
    uint8_t* __restrict d = m + static_cast<size_t>(j) * gw;
    std::memset(d, 0, gw);
    const int a = std::max(0, j - k), b = std::min(gh - 1, j + k);
    for (int q = a; q <= b; ++q) {
      const uint8_t* __restrict s = t + static_cast<size_t>(q) * gw;
      for (int i = 0; i < gw; ++i) d[i] |= s[i];
    }
  }
}
}  // namespace

void DilateOr(std::vector<uint8_t>& m, int gw, int gh, int k, int threads) {
  if (k <= 0) return;
  std::vector<uint8_t> t(m.size());
  // Horizontal pass into t, then vertical back into m: each row of either pass is independent.
  const int band = BandRows(gw, 1 << 16), items = (gh + band - 1) / band;
  ParallelForEach(items, threads, [&](int, int item) {
    DilateRowsH(m.data(), t.data(), gw, k, item * band, std::min(gh, item * band + band));
  });
  ParallelForEach(items, threads, [&](int, int item) {
    DilateRowsV(t.data(), m.data(), gw, gh, k, item * band, std::min(gh, item * band + band));
  });
}

// Pixels as u32 words (alpha in the top byte on little-endian targets) vectorise far better than
// stride-4 byte access.
void ZeroTransparentRow(uint8_t* row, int w) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (int x = 0; x < w; ++x) {
    uint32_t v;
    std::memcpy(&v, row + 4 * static_cast<size_t>(x), 4);
    v = (v >> 24) ? v : 0u;
    std::memcpy(row + 4 * static_cast<size_t>(x), &v, 4);
  }
#else
  for (int x = 0; x < w; ++x) {
    uint8_t* px = row + static_cast<size_t>(x) * 4;
    const uint8_t m = px[3] ? 0xFF : 0;
    px[0] &= m;
    px[1] &= m;
    px[2] &= m;
  }
#endif
}

}  // namespace cutout
