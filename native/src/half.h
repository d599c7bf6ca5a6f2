// SPDX-License-Identifier: MIT
// IEEE half (float16) ⇄ float32 for models whose input or output tensor is float16 (an fp16 export
// that kept no float32 casts at its ends). F16C eight at a time where the build has it, else bit by
// bit; both round to nearest even (IEEE's default). Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutout {

// dst[i] = half(src[i]) for n values (NaN stays NaN, beyond ±65504 becomes ±infinity).
void FloatToHalf(const float* src, uint16_t* dst, size_t n);

// dst[i] = float(src[i]) for n values (exact).
void HalfToFloat(const uint16_t* src, float* dst, size_t n);

}  // namespace cutout
