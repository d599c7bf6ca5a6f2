// SPDX-License-Identifier: MIT
#include "grid.h"

#include <algorithm>
#include <cstring>

#include "parallel.h"

namespace cutout {

std::vector<int> CellEdges(int n_src, int n_dst) {
  std::vector<int> e(n_dst + 1);
  for (int i = 0; i <= n_dst; ++i) e[i] = static_cast<int>(static_cast<int64_t>(i) * n_src / n_dst);
  return e;
}

// Column sums over a cell's rows first (contiguous u8 adds, vectorised), then one horizontal
// reduction per cell.
void AreaAverage(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
                 int gy0, int gy1, float* G, int gw) {
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const size_t xa = static_cast<size_t>(cx[gx0]) * 4, xb = static_cast<size_t>(cx[gx1]) * 4;
  std::vector<uint32_t> accv(xb - xa);
  std::vector<uint64_t> sums(static_cast<size_t>(gx1 - gx0) * 4);
  uint32_t* __restrict acc = accv.data();
  for (int j = gy0; j < gy1; ++j) {
    std::fill(sums.begin(), sums.end(), 0);
    int y = cy[j];
    while (y < cy[j + 1]) {
      // u32 column sums hold 2^24 rows of 255 without overflow.
      const int y_end = static_cast<int>(std::min<int64_t>(cy[j + 1], static_cast<int64_t>(y) + (1 << 24)));
      std::fill(accv.begin(), accv.end(), 0u);
      for (; y < y_end; ++y) {
        const uint8_t* __restrict row = rgba + static_cast<size_t>(y) * row_bytes + xa;
        for (size_t k = 0; k < xb - xa; ++k) acc[k] += row[k];
      }
      for (int i = gx0; i < gx1; ++i) {
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t x = static_cast<size_t>(cx[i]) * 4 - xa; x < static_cast<size_t>(cx[i + 1]) * 4 - xa; x += 4) {
          s0 += acc[x];
          s1 += acc[x + 1];
          s2 += acc[x + 2];
          s3 += acc[x + 3];
        }
        uint64_t* s = &sums[static_cast<size_t>(i - gx0) * 4];
        s[0] += s0;
        s[1] += s1;
        s[2] += s2;
        s[3] += s3;
      }
    }
    const double rows = cy[j + 1] - cy[j];
    float* o = G + static_cast<size_t>(j - gy0) * gw * 4;
    for (int i = gx0; i < gx1; ++i) {
      const double inv = 1.0 / (255.0 * rows * (cx[i + 1] - cx[i]));
      for (int c = 0; c < 4; ++c) o[i * 4 + c] = static_cast<float>(sums[static_cast<size_t>(i - gx0) * 4 + c] * inv);
    }
  }
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

}  // namespace cutout
