// SPDX-License-Identifier: MIT
// Whether a run of RGBA pixels has any alpha in a range: the composite's scans over mostly sure
// foreground or background (the semi-transparent box, the foreground box). Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "vec.h"

namespace cutout {

// Any of the n pixels at px with lo <= alpha <= hi. The pixels are read as u32 words (alpha in the
// top byte on little-endian targets), eight at a time in U32x8 (GCC left the plain loop's bool
// reduction scalar: a compare and a branch per pixel), a group of 32 between tests so that a row
// that has one stops early; inline, so constant bounds fold into the loop.
inline bool AnyAlphaIn(const uint8_t* px, int n, uint8_t lo, uint8_t hi) {
  const uint32_t span = static_cast<uint32_t>(hi - lo);
  int i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // Lanes of -1 where pixels [i, i + 8·groups) are in range, or'ed together.
  auto hits = [&](int groups) {
    I32x8 hit = {};
    for (int k = 0; k < 8 * groups; k += 8) {
      const U32x8 v = LoadVec<U32x8>(px + 4 * static_cast<size_t>(i + k));
      hit |= ((v >> 24) - lo) <= span;
    }
    uint32_t lanes[8];
    std::memcpy(lanes, &hit, sizeof(lanes));
    uint32_t any = 0;
    for (uint32_t l : lanes) any |= l;
    return any != 0;
  };
  for (; i + 32 <= n; i += 32)
    if (hits(4)) return true;
  for (; i + 8 <= n; i += 8)
    if (hits(1)) return true;
  for (; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, px + 4 * static_cast<size_t>(i), 4);
    if ((v >> 24) - lo <= span) return true;
  }
#else
  for (; i < n; ++i)
    if (static_cast<uint32_t>(px[4 * i + 3] - lo) <= span) return true;
#endif
  return false;
}

// Pixels per vector test in the scans from a row's ends: most of a row is sure foreground or
// background, stepped over a group at a time (a long stride first, then a short one near the hit).
constexpr int kAlphaScanGroup = 16;
constexpr int kAlphaScanStride = 64;

inline bool AlphaIn(uint8_t a, uint8_t lo, uint8_t hi) {
  return static_cast<uint32_t>(a - lo) <= static_cast<uint32_t>(hi - lo);
}

// First x in [from, to) of the row with lo <= alpha <= hi, or -1.
inline int FirstAlphaIn(const uint8_t* row, int from, int to, uint8_t lo, uint8_t hi) {
  int x = from;
  while (x + kAlphaScanStride <= to && !AnyAlphaIn(row + 4 * static_cast<size_t>(x), kAlphaScanStride, lo, hi))
    x += kAlphaScanStride;
  while (x + kAlphaScanGroup <= to && !AnyAlphaIn(row + 4 * static_cast<size_t>(x), kAlphaScanGroup, lo, hi))
    x += kAlphaScanGroup;
  for (; x < to; ++x)
    if (AlphaIn(row[4 * static_cast<size_t>(x) + 3], lo, hi)) return x;
  return -1;
}

// Last x in [from, to) of the row with lo <= alpha <= hi, or -1.
inline int LastAlphaIn(const uint8_t* row, int from, int to, uint8_t lo, uint8_t hi) {
  int x = to;  // one past the pixels still to look at
  while (x - kAlphaScanStride >= from &&
         !AnyAlphaIn(row + 4 * static_cast<size_t>(x - kAlphaScanStride), kAlphaScanStride, lo, hi))
    x -= kAlphaScanStride;
  while (x - kAlphaScanGroup >= from &&
         !AnyAlphaIn(row + 4 * static_cast<size_t>(x - kAlphaScanGroup), kAlphaScanGroup, lo, hi))
    x -= kAlphaScanGroup;
  for (; x > from; --x)
    if (AlphaIn(row[4 * static_cast<size_t>(x - 1) + 3], lo, hi)) return x - 1;
  return -1;
}

}  // namespace cutout
