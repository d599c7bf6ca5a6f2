// SPDX-License-Identifier: MIT
#include "process_args.h"

#include "memory.h"
#include "napi_util.h"
#include "ort_allocator.h"
#include "ort_env.h"
#include "scratch.h"

namespace cutout {

Napi::Value JsLoadedModels(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(LoadedModelCount()));
}

Napi::Value JsTrimMemory(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), TrimMemory()); }

Napi::Value JsScratchCache(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsUndefined()) {
    CUTOUT_THROW_TYPE_IF(!info[0].IsNumber(), env, "ERR_CUTOUT_ARG", "Expected a number of bytes for limitBytes");
    const double limit = info[0].As<Napi::Number>().DoubleValue();
    CUTOUT_THROW_TYPE_IF(!(limit >= 0 && limit <= 1099511627776.0), env, "ERR_CUTOUT_ARG",
                         "Expected limitBytes between 0 and 1 TiB but received ", limit);
    SetScratchCacheLimit(static_cast<size_t>(limit));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("limit", Napi::Number::New(env, static_cast<double>(ScratchCacheLimit())));
  out.Set("cached", Napi::Number::New(env, static_cast<double>(ScratchCached())));
  out.Set("cachedResident", Napi::Number::New(env, static_cast<double>(ScratchCachedResident())));
  out.Set("inUse", Napi::Number::New(env, static_cast<double>(ScratchInUse())));
  // The most in use since the last call (each call starts the count again).
  out.Set("peakInUse", Napi::Number::New(env, static_cast<double>(ScratchPeakInUse(true))));
  return out;
}

Napi::Value JsReleaseScratch(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(ReleaseScratch()));
}

Napi::Value JsOrtBytesInUse(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(OrtBytesInUse()));
}

}  // namespace cutout
