// SPDX-License-Identifier: MIT
// Colour-model matting: a post-pass after the guided refinement that re-estimates alpha in the soft
// band from the photo's colours. Local foreground (F) and background (B) colours come from nearby
// "sure" pixels; each band pixel's colour is projected onto the B→F line, and that estimate is blended
// with the network's alpha where F and B are far enough apart to tell. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutout {

struct MattingParams {
  // Grid cells (the matte's grid, ≤ the photo's size) whose mean alpha is <= sure_bg / >= sure_fg are
  // sure background / foreground colour samples; cells in between are uncertain. Tuned on the
  // alphamatting dev items: the plateau is flat (SAD 14.25–14.49 for 0.03–0.1 / 0.7–0.9); in
  // cross-validation the folds disagree about both (no stable choice), so these stay.
  float sure_bg = 0.05f;
  float sure_fg = 0.8f;
  // Uncertain cells grown by this many cells (square) give the band that is re-estimated. 1 (was 3):
  // every cross-validation fold chose it (docs/quality.md, "Cross-validated evaluation").
  int band_dilate = 1;
  // F and B are sums of sure cells blurred at three scales (Gaussian σ in grid cells: 2·sigma,
  // 8·sigma and 32·sigma, on half-, 1/8- and 1/32-size grids). Each band cell takes the finest scale
  // whose blurred weight of sure cells is >= min_support (the coarsest whenever it has any). One
  // scale alone scores SAD 15.6–16.2 instead of 14.3: thin hair needs the fine one, wide soft areas
  // the coarse ones.
  float sigma = 2.f;
  float min_support = 0.05f;
  // Trust in the colour estimate grows linearly with |F - B| (RGB, 0..1 units) from confidence_min
  // (none: the network's alpha is kept) to confidence_min + confidence_range (full).
  float confidence_min = 0.05f;
  float confidence_range = 0.15f;
};

// In place on an interleaved RGBA u8 image (row stride w*4) whose alpha holds the refined matte:
// RGB is read-only; alpha changes only inside the band, and never crosses 0.5: a pixel with
// alpha >= 128 keeps alpha >= 128, one with alpha <= 127 keeps alpha <= 127 (so any mask made by
// thresholding at 0.5 is unchanged). lw×lh is the size of the network's matte: the working grid is
// min(lw, w) × min(lh, h) cells tiling the photo.
// Cost: one streaming pass averaging the photo onto the grid, blurs on the half-size grid
// (O(grid), independent of the photo's size) and a few ns per band pixel. 12 MP photo, 1024² matte:
// ~29–40 ms on one core of the 2-core dev VM, ~16–22 ms on two (docs/native.md).
// `threads` splits the grid rows, the blurs and the output rows; the bytes are the same for any count.
void MatteByColourModel(uint8_t* rgba, int w, int h, int lw, int lh, const MattingParams& p, int threads = 1);

// Heap scratch MatteByColourModel allocates (for admission control): ~11 bytes per grid cell
// (~11 MB for a 1024² matte, whatever the photo's size), plus per thread 16 bytes per output column
// and ~0.5 MB for a 1024² matte (averaged cells, blur buffers).
size_t MattingScratchBytes(int w, int h, int lw, int lh, const MattingParams& p = MattingParams(), int threads = 1);

}  // namespace cutout
