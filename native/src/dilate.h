// SPDX-License-Identifier: MIT
// Binary dilation of byte masks on the matte grid, shared by the refinement and the matting band.
#pragma once

#include <cstdint>
#include <vector>

namespace cutout {

// Separable OR-dilation of a gw×gh byte mask (row-major, 0/non-zero) by radius k: square window,
// clipped at the borders. k <= 0 leaves the mask as it is.
void DilateOr(std::vector<uint8_t>& m, int gw, int gh, int k);

}  // namespace cutout
