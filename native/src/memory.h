// SPDX-License-Identifier: MIT
// Process-wide glibc malloc settings and trimming (docs/memory.md). Pure C++, no N-API.
#pragma once

#include <cstddef>

namespace cutout {

// Hot while busy, lean when idle (docs/memory.md). Allocations of at least this many bytes get their
// own mmap, unmapped on free: a photo's big buffers (the RGBA of a photo over 1 MP, libvips' decode
// and encode buffers) leave nothing behind in malloc's heaps, where freed blocks below a heap's top
// stay resident until the idle release (32 MiB: ~290 MB of heaps at the peak of 30 requests at c = 4;
// 4 MiB: ~150). With glibc.malloc.hugetlb=1 (bin/cutout sets it) these mappings are huge pages, so a
// 48 MB RGBA is ~24 faults, cheap when the memory was freed a moment before. Fixed, it also stops
// glibc's threshold from wandering with every large free.
constexpr size_t kMmapThresholdBytes = 4 * 1024 * 1024;

// malloc arenas: glibc gives threads up to 8 per core, each keeping its own freed memory (libvips',
// ONNX Runtime's and the composite's threads); two bound what the heaps hold between idle releases
// (peak over 30 requests at c = 4: 603 → 577 MB). Applies to arenas created after TuneMalloc.
constexpr int kArenaMax = 2;

// Free memory at the top of a heap that stays mapped on free (glibc's default: 128 KiB). Freed
// buffers below the top stay mapped whatever this is; the top of a thread's heap is trimmed only on a
// free that leaves it above this, and malloc_trim never shrinks it, so this much per arena stays
// resident after the idle release (8 MiB: ~196 MB idle after a burst of photos; 1 MiB: ~179, against
// 158 before it; a 0.45 MP photo then faults in ~900 pages a request instead of ~400, a 12 MP one
// ~4,700 as before). The pool hands the rest back once idle (TrimMemory).
constexpr size_t kTrimThresholdBytes = 1 * 1024 * 1024;

// Sets the thresholds and the arena count once per process (idempotent). Skipped when the environment variable
// CUTOUT_MALLOC_TUNING is "off" (for side-by-side measurements). Returns whether it was applied.
bool TuneMalloc();

// Hands the whole pages inside [p, p + bytes) back to the system (MADV_DONTNEED): they stay mapped
// and read as zeros, faulted in again when next touched. For buffers kept for their address but
// idle for now (a session's input and output tensors).
void DropPages(void* p, size_t bytes);

// malloc_trim(0): returns free heap pages of every malloc arena to the system. True when memory
// was released.
bool TrimMemory();

}  // namespace cutout
