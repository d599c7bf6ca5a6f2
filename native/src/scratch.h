// SPDX-License-Identifier: MIT
// The composite passes' big scratch buffers (the refinement's guide and coefficient grids, the
// matting's colour planes, the foreground solve's levels: ~50 MB for a 1 MP photo), taken from a
// process-wide cache of mmapped blocks instead of malloc. With the addon's fixed 64 KiB mmap
// threshold (memory.h) every malloc of them is a fresh mapping whose pages fault in on first touch:
// a third of the composite's time for a 1 MP photo, and the faults of many worker threads contend
// on the process's memory map. By default (limit 0) a block goes back to the system when its buffer
// is freed, as before; the staged (GPU) pool sets a limit, keeping blocks for the next photo while
// work is queued, and releases them when its photo workers go idle (docs/native.md, "Scratch
// memory"). Pure C++, no N-API; thread-safe.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace cutout {

// Bytes of free blocks the cache may keep (0: keep none, free at once). Lowering it releases the excess.
void SetScratchCacheLimit(size_t bytes);
size_t ScratchCacheLimit();
// Unmaps every free block; returns the bytes released.
size_t ReleaseScratch();
// Bytes held in free blocks now.
size_t ScratchCached();

// A block of at least `bytes` (page-aligned, contents undefined); nullptr if the system refuses.
void* TakeScratch(size_t bytes, size_t* granted);
// Back to the cache (or the system when over the limit). `granted` as TakeScratch gave it.
void GiveScratch(void* p, size_t granted);

// An uninitialised array of n T from the cache, returned to it when destroyed. Throws std::bad_alloc
// when the memory cannot be had (the composite's callers turn that into ERR_CUTOUT_COMPOSITE).
template <class T>
class ScratchArray {
 public:
  ScratchArray() = default;
  explicit ScratchArray(size_t n) {
    if (n == 0) return;
    p_ = static_cast<T*>(TakeScratch(n * sizeof(T), &granted_));
    if (!p_) throw std::bad_alloc();
  }
  ScratchArray(ScratchArray&& o) noexcept { swap(o); }
  ScratchArray& operator=(ScratchArray&& o) noexcept {
    ScratchArray(std::move(o)).swap(*this);
    return *this;
  }
  ScratchArray(const ScratchArray&) = delete;
  ScratchArray& operator=(const ScratchArray&) = delete;
  ~ScratchArray() {
    if (p_) GiveScratch(p_, granted_);
  }
  void swap(ScratchArray& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(granted_, o.granted_);
  }
  T* get() const { return p_; }
  T& operator[](size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  size_t granted_ = 0;
};

}  // namespace cutout
