// SPDX-License-Identifier: MIT
// The JS side of libvips_decode.h and png_decode.h: a plain photo decoded into the caller's buffer.
#pragma once

#include <napi.h>

namespace cutout {

// decodePlainRgba(input: Uint8Array, width, height, dst: Uint8Array) → boolean: true when dst holds the
// photo as RGBA; false when libvips is not loaded or the photo is not plain (decode it through sharp).
// Throws ERR_CUTOUT_DECODE (libvips' message) when the bytes do not decode.
Napi::Value JsDecodePlainRgba(const Napi::CallbackInfo& info);

// decodePlainPng(input: Uint8Array, width, height, dst: Uint8Array) → boolean: true when the addon's own
// PNG decoder (png_decode.h) decoded it into dst (width × height × 4 bytes); false for a file it leaves
// to libvips. What decodePlainRgba tries first for a PNG; on its own for the tests and bench:png-decode.
Napi::Value JsDecodePlainPng(const Napi::CallbackInfo& info);

// probeHeader(input: Uint8Array) → { format, width, height, bands, bandFormat, interpretation, hasAlpha,
// hasProfile, orientation, interlaced, chromaSubsampling? } | null: libvips' header of a JPEG, PNG or
// WebP read on the calling thread (libvips_decode.h, ProbeHeader); null: ask sharp.
Napi::Value JsProbeHeader(const Napi::CallbackInfo& info);

// libvipsDecodeAvailable() → boolean: whether libvips' C API was found in this process.
Napi::Value JsLibvipsDecodeAvailable(const Napi::CallbackInfo& info);

}  // namespace cutout
