// SPDX-License-Identifier: MIT
// Registers the addon's exports, nothing else: the JS side of each entry point lives in its *_args.cc
// (or session.cc, batch_session.cc), the work in the pure C++ files.
#include <napi.h>

#include "batch_session.h"
#include "composite_args.h"
#include "decode_args.h"
#include "memory.h"
#include "ort_env.h"
#include "pixels_args.h"
#include "png_args.h"
#include "process_args.h"
#include "session.h"
#include "shadow_args.h"

namespace cutout {
namespace {

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // Before ORT or libvips allocate anything big in this process (docs/memory.md).
  const bool malloc_tuned = TuneMalloc();
  exports.Set("Session", Session::Define(env));
  exports.Set("BatchSession", BatchSession::Define(env));
  exports.Set("preprocess", Napi::Function::New<JsPreprocess>(env, "preprocess"));
  exports.Set("resizeToRgb", Napi::Function::New<JsResizeToRgb>(env, "resizeToRgb"));
  exports.Set("upsampleMask", Napi::Function::New<JsUpsampleMask>(env, "upsampleMask"));
  exports.Set("flattenOnColor", Napi::Function::New<JsFlattenOnColor>(env, "flattenOnColor"));
  exports.Set("blendOver", Napi::Function::New<JsBlendOver>(env, "blendOver"));
  exports.Set("extractAlpha", Napi::Function::New<JsExtractAlpha>(env, "extractAlpha"));
  exports.Set("drawShadow", Napi::Function::New<JsDrawShadow>(env, "drawShadow"));
  exports.Set("decodePlainRgba", Napi::Function::New<JsDecodePlainRgba>(env, "decodePlainRgba"));
  exports.Set("decodePlainPng", Napi::Function::New<JsDecodePlainPng>(env, "decodePlainPng"));
  exports.Set("probeHeader", Napi::Function::New<JsProbeHeader>(env, "probeHeader"));
  exports.Set("libvipsDecodeAvailable", Napi::Function::New<JsLibvipsDecodeAvailable>(env, "libvipsDecodeAvailable"));
  exports.Set("encodePng", Napi::Function::New<JsEncodePng>(env, "encodePng"));
  exports.Set("compositeMask", Napi::Function::New<JsCompositeMask>(env, "compositeMask"));
  exports.Set("loadedModels", Napi::Function::New<JsLoadedModels>(env, "loadedModels"));
  exports.Set("scratchCache", Napi::Function::New<JsScratchCache>(env, "scratchCache"));
  exports.Set("releaseScratch", Napi::Function::New<JsReleaseScratch>(env, "releaseScratch"));
  exports.Set("ortBytesInUse", Napi::Function::New<JsOrtBytesInUse>(env, "ortBytesInUse"));
  exports.Set("trimMemory", Napi::Function::New<JsTrimMemory>(env, "trimMemory"));
  exports.Set("mmapThreshold",
              malloc_tuned ? Napi::Number::New(env, static_cast<double>(kMmapThresholdBytes)) : env.Null());
  exports.Set("ortVersion", Napi::String::New(env, OrtGetApiBase()->GetVersionString()));
  return exports;
}

}  // namespace
}  // namespace cutout

static Napi::Object InitCutout(Napi::Env env, Napi::Object exports) { return cutout::Init(env, exports); }

NODE_API_MODULE(cutout, InitCutout)
