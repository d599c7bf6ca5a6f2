// SPDX-License-Identifier: MIT
#include "postprocess.h"

#include <algorithm>
#include <cmath>

namespace cutout {

void PostprocessMask(float* mask, size_t n, const MaskPostprocess& p) {
  if (n == 0 || p.IsIdentity()) return;
  if (p.activation == OutputActivation::kSigmoid) {
    for (size_t i = 0; i < n; i++) mask[i] = 1.0f / (1.0f + std::exp(-mask[i]));
  }
  if (p.range == OutputRange::kMinMax) {
    const auto [lo, hi] = std::minmax_element(mask, mask + n);
    const float mi = *lo, span = *hi - *lo;
    if (!(span > 0) || !std::isfinite(span)) return;
    // A division, not a reciprocal's product: the greatest value comes out exactly 1.
    for (size_t i = 0; i < n; i++) mask[i] = (mask[i] - mi) / span;
  }
}

}  // namespace cutout
