// SPDX-License-Identifier: MIT
#include "memory.h"

#include <malloc.h>

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
              mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThresholdBytes)) == 1;
  });
  return applied;
}

bool TrimMemory() { return malloc_trim(0) != 0; }

}  // namespace cutout
