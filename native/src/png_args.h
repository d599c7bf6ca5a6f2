// SPDX-License-Identifier: MIT
// The JS side of the PNG encoder (png_encode.h).
#pragma once

#include <napi.h>

namespace cutout {

// encodePng(pixels: Uint8Array, width, height, channels, { level, threads, strategy? }) → Uint8Array
Napi::Value JsEncodePng(const Napi::CallbackInfo& info);

}  // namespace cutout
