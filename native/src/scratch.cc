// SPDX-License-Identifier: MIT
#include "scratch.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace cutout {
namespace {

constexpr size_t kPage = 4096;
// Fresh memory comes in chunks of at least this much (a bigger request gets a chunk of its own
// size): the spans of a chunk are split for requests and merged again when freed, so a model run's
// tensors and a photo's passes share the same mapped pages instead of each holding blocks of their
// own sizes (best fit over address-ordered spans, as ORT's BFC arena does). Big enough for the int8
// model's weights and one run's tensors together (~180 MB): with 128 MiB chunks a run spread over
// two, and best fit touched ~110 MB more of them, kept resident while busy (docs/memory.md). Only
// touched pages are resident: the rest of a chunk is address space.
constexpr size_t kChunk = 256 * 1024 * 1024;

struct Span {
  uintptr_t at;
  size_t bytes;
};

std::mutex g_mutex;
// Free spans, by address (to merge neighbours) and by size (best fit). Guarded by g_mutex.
std::map<uintptr_t, size_t> g_by_address;
std::multimap<size_t, uintptr_t> g_by_size;
size_t g_cached = 0;       // bytes in free spans
size_t g_in_use = 0;       // bytes in taken blocks
size_t g_peak_in_use = 0;  // the most g_in_use has been since ScratchPeakInUse last reset it
size_t g_limit = kDefaultScratchCacheBytes;

// CUTOUT_SCRATCH_HUGEPAGES=off leaves the chunks on 4 KiB pages (for side-by-side measurements).
bool HugePages() {
  static const bool on = [] {
    const char* env = std::getenv("CUTOUT_SCRATCH_HUGEPAGES");
    return !(env && std::strcmp(env, "off") == 0);
  }();
  return on;
}

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Under g_mutex.
void CountTaken(size_t bytes) {
  g_in_use += bytes;
  g_peak_in_use = std::max(g_peak_in_use, g_in_use);
}

void EraseBySize(size_t bytes, uintptr_t at) {
  auto [lo, hi] = g_by_size.equal_range(bytes);
  for (auto it = lo; it != hi; ++it)
    if (it->second == at) {
      g_by_size.erase(it);
      return;
    }
}

void InsertFree(uintptr_t at, size_t bytes) {
  g_by_address[at] = bytes;
  g_by_size.emplace(bytes, at);
  g_cached += bytes;
}

void EraseFree(uintptr_t at, size_t bytes) {
  g_by_address.erase(at);
  EraseBySize(bytes, at);
  g_cached -= bytes;
}

// Under g_mutex: a free span, merged with free neighbours that touch it. Memory of two mappings
// that happen to be adjacent merges too: it is one contiguous range either way.
void AddFree(uintptr_t at, size_t bytes) {
  auto next = g_by_address.lower_bound(at);
  if (next != g_by_address.end() && next->first == at + bytes) {
    const size_t n = next->second;
    EraseFree(next->first, n);
    bytes += n;
  }
  auto prev = g_by_address.lower_bound(at);
  if (prev != g_by_address.begin()) {
    --prev;
    if (prev->first + prev->second == at) {
      const uintptr_t p = prev->first;
      const size_t n = prev->second;
      EraseFree(p, n);
      at = p;
      bytes += n;
    }
  }
  InsertFree(at, bytes);
}

// Under g_mutex: free spans out (largest first) until the cache holds at most `limit` bytes.
std::vector<Span> TrimTo(size_t limit) {
  std::vector<Span> out;
  while (g_cached > limit && !g_by_size.empty()) {
    auto it = std::prev(g_by_size.end());
    const Span s{it->second, it->first};
    EraseFree(s.at, s.bytes);
    out.push_back(s);
  }
  return out;
}

void Unmap(const std::vector<Span>& spans) {
  for (const Span& s : spans) munmap(reinterpret_cast<void*>(s.at), s.bytes);
}

}  // namespace

void SetScratchCacheLimit(size_t bytes) {
  std::vector<Span> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_limit = bytes;
    out = TrimTo(bytes);
  }
  Unmap(out);  // outside the lock: munmap can take a while
}

size_t ScratchCacheLimit() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_limit;
}

size_t ReleaseScratch() {
  std::vector<Span> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    out = TrimTo(0);
  }
  size_t bytes = 0;
  for (const Span& s : out) bytes += s.bytes;
  Unmap(out);
  return bytes;
}

size_t ScratchCached() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_cached;
}

size_t ScratchCachedResident() {
  std::lock_guard<std::mutex> lock(g_mutex);
  size_t resident = 0;
  std::vector<unsigned char> pages;
  for (const auto& [at, bytes] : g_by_address) {
    pages.resize(bytes / kPage);
    if (mincore(reinterpret_cast<void*>(at), bytes, pages.data()) != 0) continue;
    for (unsigned char p : pages) resident += (p & 1) ? kPage : 0;
  }
  return resident;
}

size_t ScratchInUse() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_in_use;
}

size_t ScratchPeakInUse(bool reset) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const size_t peak = g_peak_in_use;
  if (reset) g_peak_in_use = g_in_use;
  return peak;
}

void* TakeScratch(size_t bytes, size_t* granted) {
  const size_t want = RoundUp(std::max<size_t>(bytes, 1), kPage);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_by_size.lower_bound(want);  // the smallest free span that fits
    if (it != g_by_size.end()) {
      const Span s{it->second, it->first};
      EraseFree(s.at, s.bytes);
      if (s.bytes > want) InsertFree(s.at + want, s.bytes - want);
      CountTaken(want);
      *granted = want;
      return reinterpret_cast<void*>(s.at);
    }
  }
  // Nothing free fits: a new chunk, its rest kept free for what comes next.
  const size_t chunk = std::max(kChunk, RoundUp(want, kChunk));
  void* p = mmap(nullptr, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    // Perhaps only the chunk's rest was too much: the request alone.
    p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      CountTaken(want);
    }
    *granted = want;
    return p;
  }
  // Huge pages for the chunk (where THP is `madvise` or `always`): a model run's ~200 MB is ~100 faults
  // instead of ~50,000 when the chunk comes back after a release, and 0.35 µs instead of 2.8 µs per
  // 4 KiB when it is taken again within the second or two the host leaves freed memory alone
  // (docs/memory.md, "Huge pages"). Advice only: ignored where THP is off.
  if (HugePages()) madvise(p, chunk, MADV_HUGEPAGE);
  std::vector<Span> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    CountTaken(want);
    if (chunk > want) {
      AddFree(reinterpret_cast<uintptr_t>(p) + want, chunk - want);
      out = TrimTo(g_limit);
    }
  }
  Unmap(out);
  *granted = want;
  return p;
}

void GiveScratch(void* p, size_t granted) {
  std::vector<Span> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_in_use -= granted;
    AddFree(reinterpret_cast<uintptr_t>(p), granted);
    out = TrimTo(g_limit);
  }
  Unmap(out);
}

}  // namespace cutout
