// SPDX-License-Identifier: MIT
// Bodies of grid.h's templates; included by grid.h only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "parallel.h"
#include "vec.h"

namespace cutout {

// Column sums over a cell's rows first (contiguous u8 adds, vectorised), then running sums along
// them, so each cell is the difference of two: no loop per cell, whose few pixels (a photo up to a few
// times the grid's width) the branch predictor cannot guess. Scratch: AreaSumsScratchBytes.
template <typename Store>
void AreaSums(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
              int gy0, int gy1, Store&& store) {
  const size_t row_bytes = static_cast<size_t>(w) * 4;
  const size_t xa = static_cast<size_t>(cx[gx0]) * 4, xb = static_cast<size_t>(cx[gx1]) * 4;
  // Column sums of the span, or in the one-row path its running sums (one more pixel's worth).
  std::vector<uint32_t> accv(xb - xa + 4);
  std::vector<uint64_t> sums(static_cast<size_t>(gx1 - gx0) * 4);
  uint32_t* __restrict acc = accv.data();
  std::vector<uint64_t> runv;  // running sums of the column sums: only grids of cells taller than a row
  uint64_t* __restrict run = nullptr;
  for (int j = gy0; j < gy1; ++j) {
    if (cy[j + 1] - cy[j] == 1) {
      // One photo row per grid row (a grid as tall as the photo: every photo up to the matte's
      // height): the running sums straight from that row, no column sums to build first. u32: a row
      // of 2^16 pixels of 255 stays below 2^24.
      const uint8_t* __restrict row = rgba + static_cast<size_t>(cy[j]) * row_bytes + xa;
      U32x4 p = {};  // a pixel's four channels at once
      for (size_t x = 0; x < xb - xa; x += 4) {
        StoreVec(acc + x, p);
        p += U32x4{row[x], row[x + 1], row[x + 2], row[x + 3]};
      }
      StoreVec(acc + (xb - xa), p);
      for (int i = gx0; i < gx1; ++i) {
        uint32_t s[4];
        StoreVec(s, LoadVec<U32x4>(acc + (static_cast<size_t>(cx[i + 1]) * 4 - xa)) -
                        LoadVec<U32x4>(acc + (static_cast<size_t>(cx[i]) * 4 - xa)));
        store(j, i, static_cast<const uint32_t*>(s), 1, cx[i + 1] - cx[i]);
      }
      continue;
    }
    if (!run) {
      runv.resize(xb - xa + 4);
      run = runv.data();
    }
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
      // Running sums of the column sums (u64: a chunk's columns may hold 2^24 rows of 255).
      U64x4 p = {};
      for (size_t x = 0; x < xb - xa; x += 4) {
        StoreVec(run + x, p);
        p += __builtin_convertvector(LoadVec<U32x4>(acc + x), U64x4);
      }
      StoreVec(run + (xb - xa), p);
      for (int i = gx0; i < gx1; ++i) {
        uint64_t* out = &sums[static_cast<size_t>(i - gx0) * 4];
        StoreVec(out, LoadVec<U64x4>(out) + (LoadVec<U64x4>(run + (static_cast<size_t>(cx[i + 1]) * 4 - xa)) -
                                            LoadVec<U64x4>(run + (static_cast<size_t>(cx[i]) * 4 - xa))));
      }
    }
    for (int i = gx0; i < gx1; ++i)
      store(j, i, &sums[static_cast<size_t>(i - gx0) * 4], cy[j + 1] - cy[j], cx[i + 1] - cx[i]);
  }
}

// The horizontal window moves four of a cell's N sums at a time (F64x4), each lane adding and
// subtracting as the scalar loop did.
template <int N, typename AddRow, typename Emit, typename RowDone>
void ClippedBoxSums(int gw, int gh, int r, AddRow&& add_row, Emit&& emit, RowDone&& row_done) {
  static_assert(N % 4 == 0, "whole vectors of sums");
  constexpr int Q = N / 4;
  std::vector<double> colv(static_cast<size_t>(N) * gw, 0.0);
  double* __restrict col = colv.data();
  for (int j = 0; j <= std::min(r, gh - 1); ++j) add_row(col, j, 1.0);
  for (int y = 0; y < gh; ++y) {
    if (y > 0) {
      if (y + r < gh) add_row(col, y + r, 1.0);
      if (y - r - 1 >= 0) add_row(col, y - r - 1, -1.0);
    }
    const int ny = std::min(y + r, gh - 1) - std::max(y - r, 0) + 1;
    F64x4 s[Q] = {};
    for (int x = 0; x <= std::min(r, gw - 1); ++x)
      for (int q = 0; q < Q; ++q) s[q] += LoadVec<F64x4>(&col[N * x + 4 * q]);
    for (int x = 0; x < gw; ++x) {
      if (x > 0) {
        if (x + r < gw)
          for (int q = 0; q < Q; ++q) s[q] += LoadVec<F64x4>(&col[N * (x + r) + 4 * q]);
        if (x - r - 1 >= 0)
          for (int q = 0; q < Q; ++q) s[q] -= LoadVec<F64x4>(&col[N * (x - r - 1) + 4 * q]);
      }
      const int nx = std::min(x + r, gw - 1) - std::max(x - r, 0) + 1;
      double flat[N];
      std::memcpy(flat, s, sizeof(flat));
      emit(y, x, static_cast<const double*>(flat), 1.0 / (static_cast<double>(nx) * ny));
    }
    row_done(y);
  }
}

namespace blur {

// Rows [y0, y1) of the horizontal pass, each through a copy of the row (`row`: w*CH floats).
template <int CH>
void Rows(float* a, int w, int r, int y0, int y1, float* __restrict row) {
  using V = F32xN<CH>;  // a cell's CH floats: one vector instead of CH scalar registers
  static_assert(sizeof(V) == sizeof(float) * CH, "one vector per cell");
  const size_t n = static_cast<size_t>(w) * CH;
  const float inv = 1.f / (2 * r + 1);
  for (int y = y0; y < y1; ++y) {
    float* __restrict d = a + static_cast<size_t>(y) * n;
    std::memcpy(row, d, n * sizeof(float));
    V s = {};
    for (int x = -r; x < r; ++x) s += LoadVec<V>(&row[std::clamp(x, 0, w - 1) * CH]);
    for (int x = 0; x < w; ++x) {
      s += LoadVec<V>(&row[std::min(x + r, w - 1) * CH]);
      StoreVec(&d[x * CH], V(s * inv));
      s -= LoadVec<V>(&row[std::max(x - r, 0) * CH]);
    }
  }
}

// The vertical pass on floats [c0, c0 + m) of every row (a block of columns): it keeps the last r+1
// original rows of the block in a ring so it can overwrite rows it has passed. buf: m*(r+2) floats.
template <int CH>
void Columns(float* a, int w, int h, int r, size_t c0, size_t m, float* buf) {
  const size_t n = static_cast<size_t>(w) * CH;
  const float inv = 1.f / (2 * r + 1);
  float* __restrict col = buf;
  float* ring = col + m;  // r+1 rows
  std::fill(col, col + m, 0.f);
  for (int y = -r; y < r; ++y) {
    const float* __restrict s = a + static_cast<size_t>(std::clamp(y, 0, h - 1)) * n + c0;
    for (size_t k = 0; k < m; ++k) col[k] += s[k];
  }
  for (int y = 0; y < h; ++y) {
    float* __restrict d = a + static_cast<size_t>(y) * n + c0;
    float* __restrict keep = ring + static_cast<size_t>(y % (r + 1)) * m;
    std::memcpy(keep, d, m * sizeof(float));
    // Row max(y-r, 0) was saved to the ring at most r rows ago.
    // Row min(y+r, h-1) >= y: not yet overwritten (or row y itself, just saved).
    const int ya = std::min(y + r, h - 1);
    const float* __restrict ad = ya > y ? a + static_cast<size_t>(ya) * n + c0 : keep;
    const float* __restrict rm = ring + static_cast<size_t>(std::max(y - r, 0) % (r + 1)) * m;
    for (size_t k = 0; k < m; ++k) {
      col[k] += ad[k];
      d[k] = col[k] * inv;
      col[k] -= rm[k];
    }
  }
}

// One box pass: rows, then blocks of columns, each independent.
template <int CH>
void BoxInPlace(float* a, int w, int h, int r, int threads, std::vector<std::vector<float>>& scratch) {
  const size_t n = static_cast<size_t>(w) * CH;
  const int rows = BandRows(w, 1 << 15);
  ParallelForEach((h + rows - 1) / rows, threads, [&](int worker, int item) {
    std::vector<float>& buf = scratch[worker];
    if (buf.size() < n) buf.resize(n);
    Rows<CH>(a, w, r, item * rows, std::min(h, item * rows + rows), buf.data());
  });
  const int cols = std::max(16, (1 << 15) / h);  // columns per block
  ParallelForEach((w + cols - 1) / cols, threads, [&](int worker, int item) {
    const size_t c0 = static_cast<size_t>(item) * cols * CH;
    const size_t m = static_cast<size_t>(std::min(w, (item + 1) * cols)) * CH - c0;
    std::vector<float>& buf = scratch[worker];
    if (buf.size() < m * (r + 2)) buf.resize(m * (r + 2));
    Columns<CH>(a, w, h, r, c0, m, buf.data());
  });
}

}  // namespace blur

template <int CH>
void GaussianBlurInPlace(float* a, int w, int h, float sigma, int threads) {
  std::vector<std::vector<float>> scratch(ClampThreads(threads));
  for (int k = 0; k < 3; ++k) blur::BoxInPlace<CH>(a, w, h, GaussRadius(sigma), threads, scratch);
}

}  // namespace cutout
