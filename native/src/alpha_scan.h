// SPDX-License-Identifier: MIT
// Whether a run of RGBA pixels has any alpha in a range: the composite's scans over mostly sure
// foreground or background (the semi-transparent box, the foreground box). Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace cutout {

// Any of the n pixels at px with lo <= alpha <= hi. The pixels are read as u32 words (alpha in the
// top byte on little-endian targets), which vectorises far better than stride-4 byte access; inline,
// so constant bounds fold into the loop.
inline bool AnyAlphaIn(const uint8_t* px, int n, uint8_t lo, uint8_t hi) {
  const uint32_t span = static_cast<uint32_t>(hi - lo);
  bool any = false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (int i = 0; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, px + 4 * static_cast<size_t>(i), 4);
    any |= (v >> 24) - lo <= span;
  }
#else
  for (int i = 0; i < n; ++i) any |= static_cast<uint32_t>(px[4 * i + 3] - lo) <= span;
#endif
  return any;
}

}  // namespace cutout
