// SPDX-License-Identifier: MIT
// Process-wide glibc malloc settings and trimming (docs/memory.md). Pure C++, no N-API.
#pragma once

#include <cstddef>

namespace cutout {

// Allocations of at least this many bytes get their own mmap and go back to the system on free.
// glibc's default threshold starts at 128 KiB but rises (up to 32 MiB) every time a large block is
// freed, after which ONNX Runtime's tensors and libvips' buffers come from the heap and stay
// resident once freed.
constexpr size_t kMmapThresholdBytes = 64 * 1024;

// Sets the fixed mmap threshold once per process (idempotent). Skipped when the environment variable
// CUTOUT_MALLOC_TUNING is "off" (for side-by-side measurements). Returns whether it was applied.
bool TuneMalloc();

// malloc_trim(0): returns free heap pages of every malloc arena to the system. True when memory
// was released.
bool TrimMemory();

}  // namespace cutout
