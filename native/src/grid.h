// SPDX-License-Identifier: MIT
// The matte grid: the photo tiled by at most the network matte's cells. Helpers shared by the guided
// refinement and the colour-model matting. Pure C++, no N-API.
#pragma once

#include <cstdint>
#include <vector>

namespace cutout {

// Cell edges when n_dst cells tile n_src pixels (n_dst <= n_src, so each cell has >= 1 pixel).
std::vector<int> CellEdges(int n_src, int n_dst);

// Area-average the full-res RGBA image (w pixels wide, row stride w*4) onto grid cells
// [gx0,gx1)×[gy0,gy1) with cell edges cx, cy. G points at the output for row gy0: 4 floats per cell
// (r,g,b,a in 0..1), cell i of row j at G[((j - gy0) * gw + i) * 4].
void AreaAverage(const uint8_t* rgba, int w, const std::vector<int>& cx, const std::vector<int>& cy, int gx0, int gx1,
                 int gy0, int gy1, float* G, int gw);

// Separable OR-dilation of a gw×gh byte mask (row-major, 0/non-zero) by radius k: square window,
// clipped at the borders. k <= 0 leaves the mask as it is. `threads` splits the rows (same result).
void DilateOr(std::vector<uint8_t>& m, int gw, int gh, int k, int threads = 1);

}  // namespace cutout
