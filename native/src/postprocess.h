// SPDX-License-Identifier: MIT
// The model's raw output plane → a matte in [0, 1], in place: the family's activation and range
// (src/model/families.ts). Pure C++.
#pragma once

#include <cstddef>

namespace cutout {

enum class OutputActivation { kNone, kSigmoid };
enum class OutputRange { kUnit, kMinMax };

struct MaskPostprocess {
  // kSigmoid: the output is logits (BiRefNet); kNone: already a probability (ISNet, U²-Net).
  OutputActivation activation = OutputActivation::kNone;
  // kMinMax: stretched so its least value is 0 and its greatest 1, as rembg and the models' own
  // inference code do for U²-Net and RMBG-1.4; kUnit: left as it is. A constant plane is left as it is.
  OutputRange range = OutputRange::kUnit;

  bool IsIdentity() const { return activation == OutputActivation::kNone && range == OutputRange::kUnit; }
};

void PostprocessMask(float* mask, size_t n, const MaskPostprocess& p);

}  // namespace cutout
