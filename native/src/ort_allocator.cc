// SPDX-License-Identifier: MIT
#include "ort_allocator.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "scratch.h"

namespace cutout {
namespace {

// Every block starts with a header of this many bytes: ORT asks for 64-byte alignment, and Free gets
// only the pointer, so the header says where the block came from and how big it is.
constexpr size_t kHeader = 64;
// Smaller requests (shapes, scalars, small kernels' buffers) go to malloc: the cache's 64 KiB
// granule would waste most of a block on them.
constexpr size_t kSmallBytes = 64 * 1024;
constexpr uint64_t kFromCache = 0x63757430626c6b31ULL;   // "cut0blk1"
constexpr uint64_t kFromMalloc = 0x63757430736d6c31ULL;  // "cut0sml1"

struct Header {
  uint64_t origin;
  size_t granted;
  size_t requested;
};
static_assert(sizeof(Header) <= kHeader, "the header must fit in front of a 64-byte aligned block");

std::atomic<size_t> g_in_use{0};

void* Take(size_t size) {
  if (size == 0) return nullptr;
  const size_t total = size + kHeader;
  void* block = nullptr;
  Header h{kFromMalloc, total, size};
  if (total < kSmallBytes) {
    if (posix_memalign(&block, kHeader, total) != 0) return nullptr;
  } else {
    block = TakeScratch(total, &h.granted);  // page-aligned
    if (!block) return nullptr;
    h.origin = kFromCache;
  }
  *static_cast<Header*>(block) = h;
  g_in_use.fetch_add(size, std::memory_order_relaxed);
  return static_cast<char*>(block) + kHeader;
}

void Give(void* p) {
  if (!p) return;
  void* block = static_cast<char*>(p) - kHeader;
  const Header h = *static_cast<Header*>(block);
  g_in_use.fetch_sub(h.requested, std::memory_order_relaxed);

  if (h.origin == kFromCache) {
    GiveScratch(block, h.granted);
  } else if (h.origin == kFromMalloc) {
    std::free(block);
  } else {
    std::abort();  // not ours: ORT handed back a pointer this allocator never gave (heap corruption)
  }
}

struct BlockAllocator : OrtAllocator {
  Ort::MemoryInfo info = Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);

  BlockAllocator() : OrtAllocator{} {
    version = ORT_API_VERSION;
    Alloc = [](OrtAllocator*, size_t size) { return Take(size); };
    Free = [](OrtAllocator*, void* p) { Give(p); };
    Info = [](const OrtAllocator* self) -> const OrtMemoryInfo* {
      return static_cast<const BlockAllocator*>(self)->info;
    };
    Reserve = [](OrtAllocator*, size_t size) { return Take(size); };
  }
};

}  // namespace

void RegisterBlockAllocator(Ort::Env& env) {
  static std::once_flag once;
  std::call_once(once, [&env] {
    // Intentionally leaked, as the Env is: sessions on every worker thread free through it until exit.
    auto* allocator = new BlockAllocator();
    Ort::ThrowOnError(Ort::GetApi().RegisterAllocator(env, allocator));
  });
}

size_t OrtBytesInUse() { return g_in_use.load(std::memory_order_relaxed); }

}  // namespace cutout
