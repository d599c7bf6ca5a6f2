// SPDX-License-Identifier: MIT
// The process's block cache: the composite passes' big scratch buffers (the refinement's guide and
// coefficient grids, the matting's colour planes, the foreground solve's levels: ~50 MB for a 1 MP
// photo) and ONNX Runtime's tensors (ort_allocator.h), from mmapped chunks split and merged as
// blocks are taken and given back (best fit). Freed blocks stay mapped, so the next photo or model
// run finds its pages there instead of faulting them in again (a fault costs 2–13 µs a page on the
// microVMs this runs on); the pools hand them all back once they go idle (ReleaseScratch;
// docs/memory.md, "Hot while busy, lean when idle"). Pure C++, no N-API; thread-safe.
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace cutout {

// The cache's limit until a pool sets one: blocks stay mapped from one photo (or model run) to the
// next, and a pool hands them all back once it goes idle (ReleaseScratch). The cache only ever holds
// blocks that were in use at once, so this bounds pathological size mixes, not the normal case.
constexpr size_t kDefaultScratchCacheBytes = size_t{1} << 30;

// Bytes of free blocks the cache may keep (0: keep none, free at once). Lowering it releases the excess.
void SetScratchCacheLimit(size_t bytes);
size_t ScratchCacheLimit();
// Unmaps every free block; returns the bytes released.
size_t ReleaseScratch();
// Bytes held in free blocks now, and how many of them are resident (touched, not handed back).
size_t ScratchCached();
size_t ScratchCachedResident();
// Bytes in blocks taken now, and the most there have been since the last reset (a reset starts
// the count again from what is in use).
size_t ScratchInUse();
size_t ScratchPeakInUse(bool reset);

// A block of at least `bytes` (page-aligned, contents undefined); nullptr if the system refuses.
// `granted` is what to give back.
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
  // Elements the block holds (at least what was asked for: the cache rounds blocks up).
  size_t capacity() const { return granted_ / sizeof(T); }

 private:
  T* p_ = nullptr;
  size_t granted_ = 0;
};

// A ScratchArray that a loop reuses, growing when a bigger one is needed. Contents are not kept
// across a growth (the users refill it each time).
template <class T>
class ScratchBuffer {
 public:
  T* Reserve(size_t n) {
    if (n > array_.capacity()) {
      array_ = ScratchArray<T>();  // give the old block back first: the cache may hand it out again
      array_ = ScratchArray<T>(n);
    }
    return array_.get();
  }
  T* get() const { return array_.get(); }

 private:
  ScratchArray<T> array_;
};

}  // namespace cutout
