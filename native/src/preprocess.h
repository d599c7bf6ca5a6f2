// SPDX-License-Identifier: MIT
// u8 HWC (RGB or RGBA) → normalised f32 NCHW (or NHWC), written into caller memory. Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutout {

struct Normalisation {
  float mean[3];
  float std[3];
};

// dst must hold 3*w*h floats. Alpha (channels==4) is ignored. value = (v - mean[c]) / std[c].
void PreprocessToNchw(const uint8_t* src, int w, int h, int channels, const Normalisation& norm, float* dst);

// The same values interleaved, [H, W, 3] (a model exported with channels last, e.g. from TensorFlow).
void PreprocessToNhwc(const uint8_t* src, int w, int h, int channels, const Normalisation& norm, float* dst);

}  // namespace cutout
