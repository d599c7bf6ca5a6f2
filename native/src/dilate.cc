// SPDX-License-Identifier: MIT
#include "dilate.h"

#include <algorithm>
#include <cstring>

namespace cutout {

void DilateOr(std::vector<uint8_t>& m, int gw, int gh, int k) {
  if (k <= 0) return;
  std::vector<uint8_t> t(m.size());
  for (int j = 0; j < gh; ++j) {
    const uint8_t* __restrict s = &m[static_cast<size_t>(j) * gw];
    uint8_t* __restrict d = &t[static_cast<size_t>(j) * gw];
    std::memcpy(d, s, gw);
    for (int o = 1; o <= k && o < gw; ++o) {  // shifted ORs: whole-row vector ops
      for (int i = 0; i < gw - o; ++i) d[i] |= s[i + o];
      for (int i = o; i < gw; ++i) d[i] |= s[i - o];
    }
  }
  for (int j = 0; j < gh; ++j) {
    uint8_t* __restrict d = &m[static_cast<size_t>(j) * gw];
    std::memset(d, 0, gw);
    const int a = std::max(0, j - k), b = std::min(gh - 1, j + k);
    for (int q = a; q <= b; ++q) {
      const uint8_t* __restrict s = &t[static_cast<size_t>(q) * gw];
      for (int i = 0; i < gw; ++i) d[i] |= s[i];
    }
  }
}

}  // namespace cutout
