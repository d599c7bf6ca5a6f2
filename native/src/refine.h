// SPDX-License-Identifier: MIT
// Matte upsampling: plain bilinear, and an edge-aware refinement (fast guided filter, He & Sun 2015)
// that snaps a blurry low-resolution matte to the full-resolution photo's edges. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutout {

struct RefineParams {
  // Guided-filter window radius, in low-res (matte) pixels: 4 on a 1024 grid ~ 16 px on a 12 MP photo.
  // Tuned on the alphamatting dev items (3x-downscaled GT, with and without extra blur): 4 is the best
  // compromise; 8 over-smooths (SAD only -9% vs bilinear) and leaves a halo ramp next to step edges.
  int radius = 4;
  // Regularisation on the guide's variance (colours in 0..1). Larger = follows the input matte more;
  // 1e-3 already loses most of the gain, 1e-5 is marginally sharper but amplifies photo noise.
  float eps = 5e-5f;
  // Matte values <= band_lo / >= band_hi count as sure background / foreground. Only pixels near a
  // low-res sample outside that range (or near a 0→1 step) are refined; the rest keep the bilinear matte.
  // band_lo 0.05 (was 0.02): every cross-validation fold chose it (docs/quality.md, "Cross-validated
  // evaluation"): the faint tail of the network's matte is left as it is.
  float band_lo = 0.05f;
  float band_hi = 0.98f;
  // Extra growth of the uncertain band, in low-res pixels (the band already reaches 1 px past it).
  int band_dilate = 1;
};

// Bilinear upsample of a low-res matte (lw×lh float 0..1, row-major) that covers the whole output
// image (stretched, aspect not kept) into the alpha channel of an interleaved u8 image:
// dst points at the first alpha byte, pixel step `step` bytes (4 for RGBA, 1 for a plain mask),
// row stride `stride` bytes. Pixel centres are aligned (same convention as OpenCV INTER_LINEAR).
// Values outside 0..1 (and NaN) are clamped. Cost: ~1 ns per output pixel (RGBA: ~0.8 ns, eight
// pixels at a time with alpha merged into their 32-bit words). `threads` splits the rows
// (native/src/parallel.h); the bytes are the same for any thread count.
void UpsampleMatteBilinear(const float* low, int lw, int lh, uint8_t* dst, int w, int h, int step, size_t stride,
                           int threads = 1);

// Guided refinement. `rgba` is the full-res image w×h, 4 channels interleaved, row stride w*4;
// its alpha channel holds the bilinear-upsampled matte on entry and the refined matte on return;
// RGB is read-only here. `low` is the same low-res matte (coefficients are computed at low resolution;
// if the matte is larger than the image in a dimension, on a grid of at most w×h cells built from the
// alpha channel instead). Outside the uncertain band the bilinear matte is kept byte for byte.
// Cost: the photo is read (area-averaged to the matte grid) only in 64×64-cell tiles near the band,
// the coefficients are computed on those tiles (+2·radius halo, O(1) in the radius per cell), and
// the full-res work is O(band pixels). 12 MP photo, 1024² matte, ~7% of pixels in the band:
// ~30 ms on one core of the 2-core dev VM (≈2.5 ms/MP, dominated by the band; ~15 ms fixed for the
// 1024² grid), ~18 ms on two (docs/native.md).
// `threads` splits the grid rows, the tiles and the output rows; the result is the same bytes for any count.
void RefineMatteGuided(uint8_t* rgba, int w, int h, const float* low, int lw, int lh, const RefineParams& p,
                       int threads = 1);

// Heap scratch RefineMatteGuided allocates (it allocates internally; this is for admission control).
// ~34 bytes per low-res (grid) pixel, i.e. ~36 MB for a 1024×1024 matte whatever the photo size,
// plus ~12 bytes per output column/row, and per thread ~0.4 MB of tile buffers and ~16 bytes per
// output column.
size_t RefineScratchBytes(int w, int h, int lw, int lh, const RefineParams& p = RefineParams(), int threads = 1);

}  // namespace cutout
