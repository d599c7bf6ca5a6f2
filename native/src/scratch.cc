// SPDX-License-Identifier: MIT
#include "scratch.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace cutout {
namespace {

constexpr size_t kGranule = 64 * 1024;  // blocks are whole multiples: close sizes share blocks

struct Block {
  void* p;
  size_t bytes;
};

std::mutex g_mutex;
std::vector<Block> g_free;  // guarded by g_mutex
size_t g_cached = 0;        // bytes in g_free
size_t g_limit = 0;

void Unmap(const std::vector<Block>& blocks) {
  for (const Block& b : blocks) munmap(b.p, b.bytes);
}

// Under g_mutex: the oldest free blocks out until the cache fits `limit`.
std::vector<Block> TrimTo(size_t limit) {
  std::vector<Block> out;
  while (g_cached > limit && !g_free.empty()) {
    out.push_back(g_free.front());
    g_cached -= g_free.front().bytes;
    g_free.erase(g_free.begin());
  }
  return out;
}

}  // namespace

void SetScratchCacheLimit(size_t bytes) {
  std::vector<Block> out;
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
  std::vector<Block> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    out = TrimTo(0);
  }
  size_t bytes = 0;
  for (const Block& b : out) bytes += b.bytes;
  Unmap(out);
  return bytes;
}

size_t ScratchCached() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_cached;
}

void* TakeScratch(size_t bytes, size_t* granted) {
  const size_t want = std::max<size_t>(kGranule, (bytes + kGranule - 1) / kGranule * kGranule);
  {
    // The smallest free block that fits and wastes at most half of itself.
    std::lock_guard<std::mutex> lock(g_mutex);
    size_t best = g_free.size();
    for (size_t i = 0; i < g_free.size(); ++i)
      if (g_free[i].bytes >= want && g_free[i].bytes / 2 <= want && (best == g_free.size() || g_free[i].bytes < g_free[best].bytes))
        best = i;
    if (best < g_free.size()) {
      const Block b = g_free[best];
      g_free.erase(g_free.begin() + best);
      g_cached -= b.bytes;
      *granted = b.bytes;
      return b.p;
    }
  }
  void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  *granted = want;
  return p;
}

void GiveScratch(void* p, size_t granted) {
  std::vector<Block> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (granted <= g_limit) {
      g_free.push_back({p, granted});
      g_cached += granted;
      out = TrimTo(g_limit);
    } else {
      out.push_back({p, granted});
    }
  }
  Unmap(out);
}

}  // namespace cutout
