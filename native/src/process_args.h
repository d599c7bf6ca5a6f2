// SPDX-License-Identifier: MIT
// The JS side of the process-wide state: models loaded, memory handed back (ort_env.h, memory.h).
#pragma once

#include <napi.h>

namespace cutout {

// loadedModels() → number of models the process holds
Napi::Value JsLoadedModels(const Napi::CallbackInfo& info);
// trimMemory() → boolean: malloc_trim(0), true when memory went back to the system.
Napi::Value JsTrimMemory(const Napi::CallbackInfo& info);

}  // namespace cutout
