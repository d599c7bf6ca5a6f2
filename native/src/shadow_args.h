// SPDX-License-Identifier: MIT
// The JS side of shadow drawing: argument checks, then DrawShadow (shadow.h).
#pragma once

#include <napi.h>

namespace cutout {

// drawShadow(rgba: Uint8Array, width, height, { type: 'drop' | '3D' | 'car', opacity: 0..100 }), in place.
Napi::Value JsDrawShadow(const Napi::CallbackInfo& info);

}  // namespace cutout
