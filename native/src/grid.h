// SPDX-License-Identifier: MIT
// The toolkit of the edge stages (guided refinement, colour-model matting, foreground colour): the
// photo tiled into grid cells and averaged onto them, centre-aligned linear taps, box filters, mask
// dilation, and the colour under alpha 0. Pure C++, no N-API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cutout {

// Cell edges when n_dst cells tile n_src pixels (n_dst <= n_src, so each cell has >= 1 pixel).
std::vector<int> CellEdges(int n_src, int n_dst);

// Sums of the full-res RGBA image (w pixels wide, row stride w*4) over grid cells [gx0,gx1)×[gy0,gy1)
// with cell edges cx, cy (absolute pixel columns and rows). For each cell, row by row:
// store(j, i, sums[4], rows, cols), `sums` u32 where a cell is one photo row (below 2^24: a generic
// store takes `const auto*`) and u64 otherwise. Integer sums: exact whatever the order.
template <typename Store>
void AreaSums(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
              int gy0, int gy1, Store&& store);

// What one AreaSums call over `pixels` photo columns and `cells` grid columns allocates: column sums
// (u32) and their running sums (u64), one more pixel's worth each, and the cells' sums (u64).
inline size_t AreaSumsScratchBytes(size_t pixels, size_t cells) {
  return (pixels + 1) * 4 * (sizeof(uint32_t) + sizeof(uint64_t)) + cells * 4 * sizeof(uint64_t);
}

// AreaSums normalised: G points at the output for row gy0, 4 floats per cell (r,g,b,a in 0..1), cell i
// of row j at G[((j - gy0) * gw + i) * 4].
void AreaAverage(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
                 int gy0, int gy1, float* G, int gw);

// Centre-aligned linear resampling: output sample d reads source samples i0 and i1, weight f on i1.
struct LinearTap {
  int i0, i1;
  float f;
};

// The tap at source coordinate s (the caller's (d + 0.5)·scale − 0.5, in the precision T it computed
// it in), clamped to [0, n_src − 1]. One rule for every resampler of the edge stages.
template <typename T>
inline LinearTap TapAt(T s, int n_src) {
  if (s < 0) s = 0;
  if (s > n_src - 1) s = static_cast<T>(n_src - 1);
  const int i = std::min(static_cast<int>(s), std::max(n_src - 2, 0));
  return {i, std::min(i + 1, n_src - 1), n_src > 1 ? static_cast<float>(s - i) : 0.f};
}

// Taps of n_dst samples over n_src as three arrays (the loops that use them vectorise).
struct LinearTaps {
  std::vector<int> i0, i1;
  std::vector<float> f;
};

// coord(d) gives output sample d's source coordinate.
template <typename Coord>
LinearTaps TapsOf(int n_src, int n_dst, Coord&& coord) {
  LinearTaps t;
  t.i0.resize(n_dst);
  t.i1.resize(n_dst);
  t.f.resize(n_dst);
  for (int d = 0; d < n_dst; ++d) {
    const LinearTap a = TapAt(coord(d), n_src);
    t.i0[d] = a.i0;
    t.i1[d] = a.i1;
    t.f[d] = a.f;
  }
  return t;
}

// n_src samples stretched over n_dst (the matte onto the photo), coordinates in double.
LinearTaps StretchTaps(int n_src, int n_dst);

// Box sums over (2r+1)² windows clipped at the borders of a gw×gh grid, streamed row by row: column
// sums in double (rows added as they enter the window, subtracted as they leave: no drift, since
// the same values come back out), then a running horizontal window. add_row(col, j, sign) adds
// sign × row j's N values per column into col (N doubles per column); emit(y, x, sums, inv) gets the
// window's N sums and 1 / its cell count; row_done(y) follows each row's emits.
template <int N, typename AddRow, typename Emit, typename RowDone>
void ClippedBoxSums(int gw, int gh, int r, AddRow&& add_row, Emit&& emit, RowDone&& row_done);

// Box blur of radius r, in place, on a CH-float interleaved w×h plane, edge cells repeated (the
// window is always full, normalised by 2r+1): three passes approximate a Gaussian. One thread, in one
// sweep down the plane (blur::ThreeBoxPipelined): faster than passes split over threads.
template <int CH>
void GaussianBlurInPlace(float* a, int w, int h, float sigma);

// The box radius GaussianBlurInPlace uses for σ: round((sqrt(4σ² + 1) − 1) / 2), at least 1.
int GaussRadius(float sigma);

// Separable OR-dilation of a gw×gh byte mask (row-major, 0/non-zero) by radius k: square window,
// clipped at the borders. k <= 0 leaves the mask as it is. `threads` splits the rows (same result).
void DilateOr(std::vector<uint8_t>& m, int gw, int gh, int k, int threads = 1);

// RGB 0 wherever alpha is 0, on one row of w RGBA pixels: hidden colour only costs PNG bytes and
// encode time. Whole pixels are stored (alpha unchanged).
void ZeroTransparentRow(uint8_t* row, int w);

}  // namespace cutout

#include "grid_inl.h"  // the templates' bodies
