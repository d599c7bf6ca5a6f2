// SPDX-License-Identifier: MIT
// Foreground colour estimation for semi-transparent pixels (removes the old background's colour
// "halo"): multi-level solver of Germer et al. 2020 ("Fast Multi-Level Foreground Estimation", as in
// pymatting's estimate_foreground_ml) on a downscaled working copy, then a per-pixel closed-form
// step at full resolution that keeps full-res detail. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alpha_extent.h"

namespace cutout {

struct ForegroundParams {
  // pymatting defaults: smoothness prior weight per neighbour, plus gradient_weight·|Δalpha|.
  float regularization = 1e-5f;
  float gradient_weight = 1.0f;
  // Gauss-Seidel sweeps per pyramid level: small_iterations while the level fits in
  // small_size×small_size, big_iterations above.
  int small_iterations = 10;
  int big_iterations = 2;
  int small_size = 32;
  // The multi-level solve runs on the bounding box of semi-transparent pixels, box-downscaled by an
  // integer factor until it has at most this many pixels. Cost and scratch scale with it.
  int max_working_pixels = 1 << 19;
};

// In place on an interleaved RGBA u8 image (row stride w*4): alpha is read; RGB is replaced by the
// estimated foreground colour where 0<alpha<255, set to 0 where alpha==0, unchanged where alpha==255.
// `partial`: the bounding box of the pixels with 0<alpha<255 (ScanAlphaExtents' `partial`).
// Cost: one streaming pass over the image (write-back/zeroing), one read of the
// semi-transparent pixels' bounding box, the multi-level solve (bounded by max_working_pixels, so
// O(1) in the photo size beyond that) and a few ns per semi-transparent pixel (listed and solved eight
// at a time). The 12 MP elephants: ~41 ms on one core of the 2-core dev VM (Zen 5), ~30 ms on two;
// the 1 MP nuthatch ~8 ms, ~6.5 on two (docs/native.md). `threads` splits the streaming passes into bands of rows and
// runs the big levels' sweeps as a wavefront; the bytes are the same for any thread count.
void EstimateForeground(uint8_t* rgba, int w, int h, const AlphaRect& partial, const ForegroundParams& p,
                        int threads = 1);

// Upper bound on the heap scratch EstimateForeground allocates (worst case: the whole image is the
// working box). ~72 bytes per working pixel (≤ 35 MB at the default max_working_pixels) plus
// ~12 bytes per image column, and per thread ~60 bytes per image column and 32 per working column.
size_t ForegroundScratchBytes(int w, int h, const ForegroundParams& p = ForegroundParams(), int threads = 1);

}  // namespace cutout
