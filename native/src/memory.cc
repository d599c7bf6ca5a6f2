// SPDX-License-Identifier: MIT
#include "memory.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cutout {

bool TuneMalloc() {
  static std::once_flag once;
  static bool applied = false;
  std::call_once(once, [] {
    const char* env = std::getenv("CUTOUT_MALLOC_TUNING");
    if (env && std::strcmp(env, "off") == 0) return;
    // Setting M_MMAP_THRESHOLD also turns off glibc's dynamic threshold adjustment.
    applied = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)) == 1 &&
              mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThresholdBytes)) == 1 &&
              mallopt(M_ARENA_MAX, kArenaMax) == 1;
  });
  return applied;
}

bool TrimMemory() { return malloc_trim(0) != 0; }

void DropPages(void* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace cutout
