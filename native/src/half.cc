// SPDX-License-Identifier: MIT
#include "half.h"

#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace cutout {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even, subnormals and all (the classic branchy form: only the tails use it).
uint16_t OneToHalf(float f) {
  const uint32_t u = Bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {                                               // below the least normal half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);           // under half the least subnormal
    const uint32_t mant = (abs & 0x007FFFFFu) | 0x00800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    const uint32_t half = mant >> shift, rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (half + (rest > mid || (rest == mid && (half & 1u)))));
  }
  const uint32_t rebased = abs - 0x38000000u;  // exponent 127 → 15
  const uint32_t half = rebased >> 13, rest = rebased & 0x1FFFu;
  return static_cast<uint16_t>(sign | (half + (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))));
}

float OneToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1Fu) return FromBits(sign | 0x7F800000u | (mant << 13));
  if (exp != 0) return FromBits(sign | ((exp + 112u) << 23) | (mant << 13));
  return FromBits(sign | Bits(static_cast<float>(mant) * (1.f / 16777216.f)));  // subnormal: mant · 2^-24
}

}  // namespace

void FloatToHalf(const float* src, uint16_t* dst, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = OneToHalf(src[i]);
}

void HalfToFloat(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; ++i) dst[i] = OneToFloat(src[i]);
}

}  // namespace cutout
