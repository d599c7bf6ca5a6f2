// SPDX-License-Identifier: MIT
// Process-wide glibc malloc settings and trimming (docs/memory.md). Pure C++, no N-API.
#pragma once

#include <cstddef>

namespace cutout {

// Hot while busy, lean when idle (docs/memory.md). Allocations of at least this many bytes get their
// own mmap, faulted in fresh and unmapped on free; smaller ones come from malloc's heaps and are
// reused, mapped, by the next photo (libvips' decode and encode buffers, the JS Buffers of a photo
// up to 8 MP). 32 MiB is the highest glibc accepts. Fixed, it also stops glibc's threshold from
// wandering with every large free. Bigger blocks (the RGBA of a photo over 8 MP) are faulted in
// fresh every time: as huge pages where glibc.malloc.hugetlb=1 is set (bin/cutout sets it).
constexpr size_t kMmapThresholdBytes = 32 * 1024 * 1024;

// Free memory at the top of a heap that stays mapped on free (glibc's default: 128 KiB). Freed
// buffers below the top stay mapped whatever this is; the top of a thread's heap is trimmed only on a
// free that leaves it above this, and malloc_trim never shrinks it, so a bigger value kept up to that
// much per thread heap after the idle release (32 MiB: +40–70 MB idle after a burst of photos; 8 MiB:
// +8, with 12 MP photos at ~4,000 faults a request). The pool hands the rest back once idle (TrimMemory).
constexpr size_t kTrimThresholdBytes = 8 * 1024 * 1024;

// Sets both thresholds once per process (idempotent). Skipped when the environment variable
// CUTOUT_MALLOC_TUNING is "off" (for side-by-side measurements). Returns whether it was applied.
bool TuneMalloc();

// malloc_trim(0): returns free heap pages of every malloc arena to the system. True when memory
// was released.
bool TrimMemory();

}  // namespace cutout
