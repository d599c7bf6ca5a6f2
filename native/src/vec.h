// SPDX-License-Identifier: MIT
// Small fixed-size vectors for the pixel kernels (GCC/Clang vector extensions: SSE/AVX on x86, NEON
// on ARM). Lanes are independent, so a kernel's result for a pixel does not depend on its neighbours
// in the vector. Typedefs per size on purpose: GCC 12 drops a `vector_size` attribute put on
// an alias template (the "vector" silently became one float), so generic code picks among these.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cutout {

typedef float F32x4 __attribute__((vector_size(16)));
typedef float F32x8 __attribute__((vector_size(32)));
typedef double F64x4 __attribute__((vector_size(32)));
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef int32_t I32x8 __attribute__((vector_size(32)));
typedef uint32_t U32x4 __attribute__((vector_size(16)));
typedef uint32_t U32x8 __attribute__((vector_size(32)));
typedef uint64_t U64x4 __attribute__((vector_size(32)));
typedef uint8_t U8x4 __attribute__((vector_size(4)));

// CH floats as one vector (CH = 4 or 8).
template <int CH>
using F32xN = std::conditional_t<CH == 8, F32x8, std::conditional_t<CH == 4, F32x4, void>>;

// An unaligned load and store (memcpy: no aliasing or alignment assumptions; compiles to one move).
template <typename V, typename T>
inline V LoadVec(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <typename V, typename T>
inline void StoreVec(T* p, const V& v) {
  std::memcpy(p, &v, sizeof(v));
}

}  // namespace cutout
