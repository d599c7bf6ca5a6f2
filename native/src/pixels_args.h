// SPDX-License-Identifier: MIT
// The JS side of the per-pixel helpers: argument checks, then the pure C++ in preprocess.h, resize.h, refine.h
// and composite.h. Coded TypeErrors (napi_util.h) for broken arguments.
#pragma once

#include <napi.h>

namespace cutout {

// preprocess(src: Uint8Array, width, height, channels, dst: Float32Array, mean[3], std[3])
Napi::Value JsPreprocess(const Napi::CallbackInfo& info);
// resizeToRgb(src: Uint8Array, width, height, channels, dst: Uint8Array, dstWidth, dstHeight, threads?)
Napi::Value JsResizeToRgb(const Napi::CallbackInfo& info);
// upsampleMask(mask: Float32Array, mw, mh, dst: Uint8Array, width, height, step)
Napi::Value JsUpsampleMask(const Napi::CallbackInfo& info);
// flattenOnColor(rgba: Uint8Array, r, g, b, a)
Napi::Value JsFlattenOnColor(const Napi::CallbackInfo& info);
// blendOver(rgba: Uint8Array, background: Uint8Array), same size, both RGBA
Napi::Value JsBlendOver(const Napi::CallbackInfo& info);
// extractAlpha(rgba: Uint8Array, dst: Uint8Array)
Napi::Value JsExtractAlpha(const Napi::CallbackInfo& info);

}  // namespace cutout
