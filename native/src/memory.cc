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

bool SingleArenaFromStart(const char* tunables, const char* arena_max_env) {
  // GLIBC_TUNABLES is name=value pairs separated by ':'; the last setting of a name wins, and a
  // tunable overrides the MALLOC_ARENA_MAX alias.
  const char* found = nullptr;
  size_t found_len = 0;
  static constexpr char kName[] = "glibc.malloc.arena_max=";
  const size_t name_len = sizeof(kName) - 1;
  for (const char* p = tunables; p && *p;) {
    const char* end = std::strchr(p, ':');
    const size_t len = end ? static_cast<size_t>(end - p) : std::strlen(p);
    if (len >= name_len && std::strncmp(p, kName, name_len) == 0) {
      found = p + name_len;
      found_len = len - name_len;
    }
    p = end ? end + 1 : p + len;
  }
  if (found) return found_len == 1 && found[0] == '1';
  return arena_max_env && std::strcmp(arena_max_env, "1") == 0;
}

const MallocTuning& TuneMalloc() {
  static std::once_flag once;
  static MallocTuning tuning;
  std::call_once(once, [] {
    const char* env = std::getenv("CUTOUT_MALLOC_TUNING");
    if (env && std::strcmp(env, "off") == 0) return;
    const size_t trim = SingleArenaFromStart(std::getenv("GLIBC_TUNABLES"), std::getenv("MALLOC_ARENA_MAX"))
                            ? kSingleArenaTrimThresholdBytes
                            : kTrimThresholdBytes;
    // Setting M_MMAP_THRESHOLD also turns off glibc's dynamic threshold adjustment.
    tuning.applied = mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes)) == 1 &&
                     mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim)) == 1 && mallopt(M_ARENA_MAX, kArenaMax) == 1;
    if (tuning.applied) tuning.trim_threshold = trim;
  });
  return tuning;
}

bool TrimMemory() { return malloc_trim(0) != 0; }

void DropPages(void* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace cutout
