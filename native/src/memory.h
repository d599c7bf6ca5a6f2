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
// (peak over 30 requests at c = 4: 603 → 577 MB). Applies only to arenas created after TuneMalloc,
// and not at all once glibc has counted 8 (it then fixes its limit): threads that allocated before the
// addon loaded keep theirs (a server has ~6). Only the tunable glibc.malloc.arena_max, read when the
// process starts, bounds them all (bin/cutout sets it to 1).
constexpr int kArenaMax = 2;

// Free memory at the top of a heap that stays mapped on free (glibc's default: 128 KiB). Freed
// buffers below the top stay mapped whatever this is; the top of a thread arena's heap is trimmed
// only on a free that leaves it above this, and malloc_trim never shrinks it, so this much per
// arena stays resident after the idle release (8 MiB: ~196 MB idle after a burst of photos; 1 MiB:
// ~179, against 158 before it). The pool hands the rest back once idle (TrimMemory).
constexpr size_t kTrimThresholdBytes = 1 * 1024 * 1024;

// The same where the process has one arena from its start (glibc.malloc.arena_max=1, or
// MALLOC_ARENA_MAX=1: bin/cutout sets the tunable): then every heap is the main arena's, whose top
// malloc_trim does give back, so the idle release still ends lean (30 requests at c = 4: idle 163–169
// MB against 164–166, peak 460 against 463–471) while a busy worker keeps the top it freed. With
// 1 MiB the buffers of 1–4 MiB a photo frees at the heap's top (libvips' decode output of a 1 MP
// photo, the model input, the photo's copy) were handed back and faulted in again every request:
// ~1,000 faults, ~14 ms at 14 µs a fault on the Zen 5 box (docs/memory.md, "One arena").
constexpr size_t kSingleArenaTrimThresholdBytes = 64 * 1024 * 1024;

// True when the environment the process started with gives malloc a single arena: `tunables` (the
// value of GLIBC_TUNABLES) sets glibc.malloc.arena_max=1, or `arena_max_env` (MALLOC_ARENA_MAX) is
// "1" and the tunables do not set it otherwise. Either may be null. Pure, for the tests.
bool SingleArenaFromStart(const char* tunables, const char* arena_max_env);

struct MallocTuning {
  bool applied = false;
  size_t trim_threshold = 0;
};

// Sets the thresholds and the arena count once per process (idempotent): the trim threshold by
// SingleArenaFromStart of this process's environment. Skipped when the environment variable
// CUTOUT_MALLOC_TUNING is "off" (for side-by-side measurements). Returns what it applied.
const MallocTuning& TuneMalloc();

// Hands the whole pages inside [p, p + bytes) back to the system (MADV_DONTNEED): they stay mapped
// and read as zeros, faulted in again when next touched. For buffers kept for their address but
// idle for now (a session's input and output tensors).
void DropPages(void* p, size_t bytes);

// malloc_trim(0): returns free heap pages of every malloc arena to the system. True when memory
// was released.
bool TrimMemory();

}  // namespace cutout
