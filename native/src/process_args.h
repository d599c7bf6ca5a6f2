// SPDX-License-Identifier: MIT
// The JS side of the process-wide state: models loaded, memory handed back (ort_env.h, memory.h, scratch.h).
#pragma once

#include <napi.h>

namespace cutout {

// loadedModels() → number of models the process holds
Napi::Value JsLoadedModels(const Napi::CallbackInfo& info);
// trimMemory() → boolean: malloc_trim(0), true when memory went back to the system.
Napi::Value JsTrimMemory(const Napi::CallbackInfo& info);
// scratchCache(limitBytes?) → { limit, cached }: sets the composite scratch cache's limit when given (scratch.h).
Napi::Value JsScratchCache(const Napi::CallbackInfo& info);
// releaseScratch() → bytes of cached scratch blocks handed back to the system.
Napi::Value JsReleaseScratch(const Napi::CallbackInfo& info);
// ortBytesInUse() → bytes ONNX Runtime holds from the block cache now (ort_allocator.h).
Napi::Value JsOrtBytesInUse(const Napi::CallbackInfo& info);

}  // namespace cutout
