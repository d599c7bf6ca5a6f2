// SPDX-License-Identifier: MIT
// Bodies of grid.h's templates; included by grid.h only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
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
  // Column sums of the span, or in the one-row path its running sums (one more pixel's worth). Not
  // initialised: every path writes them before reading them (zeroing them cost ~16 MB of stores per
  // pass over a 12 MP photo, for 48 MB of loads).
  const std::unique_ptr<uint32_t[]> accv(new uint32_t[xb - xa + 4]);
  const std::unique_ptr<uint64_t[]> sums(new uint64_t[static_cast<size_t>(gx1 - gx0) * 4]);
  uint32_t* __restrict acc = accv.get();
  std::unique_ptr<uint64_t[]> runv;  // running sums of the column sums: only grids of cells taller than a row
  uint64_t* __restrict run = nullptr;
  int widest = 0;
  for (int i = gx0; i < gx1; ++i) widest = std::max(widest, cx[i + 1] - cx[i]);
  const bool narrow = widest <= 2;
  for (int j = gy0; j < gy1; ++j) {
    if (cy[j + 1] - cy[j] == 1) {
      // One photo row per grid row (a grid as tall as the photo: every photo up to the matte's
      // height): the running sums straight from that row, no column sums to build first. u32: a row
      // of 2^16 pixels of 255 stays below 2^24.
      const uint8_t* __restrict row = rgba + static_cast<size_t>(cy[j]) * row_bytes + xa;
      if (narrow) {
        // Cells of one or two pixels: a cell's first pixel plus its last where that is another.
        for (int i = gx0; i < gx1; ++i) {
          const uint8_t* a = row + (static_cast<size_t>(cx[i]) * 4 - xa);
          const uint8_t* b = row + (static_cast<size_t>(cx[i + 1] - 1) * 4 - xa);
          const uint32_t two = cx[i + 1] - cx[i] == 2 ? ~0u : 0u;
          uint32_t s[4];
          StoreVec(s, U32x4{a[0], a[1], a[2], a[3]} + (U32x4{b[0], b[1], b[2], b[3]} & two));
          store(j, i, static_cast<const uint32_t*>(s), 1, cx[i + 1] - cx[i]);
        }
        continue;
      }
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
      runv.reset(new uint64_t[xb - xa + 4]);
      run = runv.get();
    }
    int y = cy[j];
    bool first_chunk = true;
    while (y < cy[j + 1]) {
      // u32 column sums hold 2^24 rows of 255 without overflow. The chunk's first row sets them
      // (zeroing them first cost more stores than the rows' loads: 74 KB a grid row at 12 MP).
      const int y_end = static_cast<int>(std::min<int64_t>(cy[j + 1], static_cast<int64_t>(y) + (1 << 24)));
      {
        const uint8_t* __restrict row = rgba + static_cast<size_t>(y) * row_bytes + xa;
        for (size_t k = 0; k < xb - xa; ++k) acc[k] = row[k];
        ++y;
      }
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
      // The first chunk sets the cells' sums, any further one adds to them.
      for (int i = gx0; i < gx1; ++i) {
        uint64_t* out = &sums[static_cast<size_t>(i - gx0) * 4];
        const U64x4 cell = LoadVec<U64x4>(run + (static_cast<size_t>(cx[i + 1]) * 4 - xa)) -
                           LoadVec<U64x4>(run + (static_cast<size_t>(cx[i]) * 4 - xa));
        StoreVec(out, first_chunk ? cell : LoadVec<U64x4>(out) + cell);
      }
      first_chunk = false;
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
    // 1 / the window's cells: one division per row for the whole windows (the same value).
    const int whole = 2 * r + 1;
    const double inv_whole = 1.0 / (static_cast<double>(whole) * ny);
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
      emit(y, x, static_cast<const double*>(flat), nx == whole ? inv_whole : 1.0 / (static_cast<double>(nx) * ny));
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

// One vertical pass of a box blur as a stage of the three passes' pipeline below: rows are handed to
// it in order as the stage before finishes them. It keeps the last r+1 input rows in a ring so it can
// overwrite rows it has passed.
struct ColumnStage {
  float* col;   // the window's running sums, n floats
  float* ring;  // the last r+1 input rows (the pass overwrites its rows in place)
};

// Output row y of a ColumnStage over the rows of `a` (n floats each): its input rows up to
// min(y + r, h - 1) are ready. Row 0 starts the sums first (the top row repeated r times).
inline void ColumnRow(float* a, size_t n, int h, int r, int y, const ColumnStage& st) {
  const float inv = 1.f / (2 * r + 1);
  float* __restrict col = st.col;
  if (y == 0) {
    std::fill(col, col + n, 0.f);
    for (int yy = -r; yy < r; ++yy) {
      const float* __restrict s = a + static_cast<size_t>(std::clamp(yy, 0, h - 1)) * n;
      for (size_t k = 0; k < n; ++k) col[k] += s[k];
    }
  }
  float* __restrict d = a + static_cast<size_t>(y) * n;
  float* __restrict keep = st.ring + static_cast<size_t>(y % (r + 1)) * n;
  std::memcpy(keep, d, n * sizeof(float));
  const int ya = std::min(y + r, h - 1);
  const float* __restrict ad = ya > y ? a + static_cast<size_t>(ya) * n : keep;
  const float* __restrict rm = st.ring + static_cast<size_t>(std::max(y - r, 0) % (r + 1)) * n;
  for (size_t k = 0; k < n; ++k) {
    col[k] += ad[k];
    d[k] = col[k] * inv;
    col[k] -= rm[k];
  }
}

// The three box passes (rows, then columns; three times) in one sweep down the plane: each stage
// runs r rows behind the one before it, so every stage meets its input rows just made, in cache.
// Each value goes through the same operations in the same order as three whole-plane passes would
// give it. On one thread: the 1 MP photo's matting blur ~2.4 → ~1.9 ms, and faster than the whole-plane
// passes split over two threads (matting 6.8 → 5.5 ms with two threads; docs/native.md).
template <int CH>
void ThreeBoxPipelined(float* a, int w, int h, int r) {
  const size_t n = static_cast<size_t>(w) * CH;
  std::vector<float> buf(n + 3 * n * static_cast<size_t>(r + 2));
  float* row = buf.data();
  ColumnStage st[3];
  for (int k = 0; k < 3; ++k) {
    st[k].col = row + n + static_cast<size_t>(k) * n * (r + 2);
    st[k].ring = st[k].col + n;
  }
  for (int t = 0; t < h + 3 * r; ++t) {
    if (t < h) Rows<CH>(a, w, r, t, t + 1, row);
    for (int k = 0; k < 3; ++k) {
      const int y = t - (k + 1) * r;  // stage k's columns pass: r rows behind its rows pass
      if (y < 0 || y >= h) continue;
      ColumnRow(a, n, h, r, y, st[k]);
      if (k < 2) Rows<CH>(a, w, r, y, y + 1, row);  // the next round's rows pass on that row
    }
  }
}

}  // namespace blur

template <int CH>
void GaussianBlurInPlace(float* a, int w, int h, float sigma) {
  blur::ThreeBoxPipelined<CH>(a, w, h, GaussRadius(sigma));
}

}  // namespace cutout
