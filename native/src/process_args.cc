// SPDX-License-Identifier: MIT
#include "process_args.h"

#include "memory.h"
#include "ort_env.h"

namespace cutout {

Napi::Value JsLoadedModels(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(LoadedModelCount()));
}

Napi::Value JsTrimMemory(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), TrimMemory()); }

}  // namespace cutout
