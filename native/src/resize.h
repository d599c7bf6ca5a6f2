// SPDX-License-Identifier: MIT
// Resampling an 8-bit RGB/RGBA image to the model's input size: separable Catmull-Rom cubic (the
// kernel libvips calls "cubic"), widened by the shrink factor when an axis shrinks (antialiased, as
// libvips' reduce does), plain when it grows; an axis shrunk 4× or more is box-averaged by
// ⌊shrink / 2⌋ first, as libvips' resize does. Pixel centres aligned. For the photos the model sees
// enlarged in some axis: libvips enlarges through its generic affine interpolator, ~45 ms for a 1 MP
// photo to 1024² on one core, where this takes a few ms (docs/native.md, "Model input"). Pure C++.
#pragma once

#include <cstdint>

namespace cutout {

// src: w×h pixels of `channels` (3 or 4) interleaved bytes, rows packed; dst: dw×dh×3 bytes (RGB;
// alpha, if any, is dropped). Aspect is not kept (the model input is stretched). The same bytes for
// any `threads` (1..64), which split the output rows.
void ResizeToRgb(const uint8_t* src, int w, int h, int channels, uint8_t* dst, int dw, int dh, int threads = 1);

}  // namespace cutout
