// SPDX-License-Identifier: MIT
// A plain photo (JPEG, PNG or WebP) decoded by libvips straight into memory the caller owns: the libvips that sharp has
// already loaded into this process, reached through its exported C API (no build-time link, no second
// copy). sharp's raw output is a buffer libvips allocated for every photo (fresh pages, ~14 us each on
// these hosts, and a Buffer that cannot be transferred between threads, so copied once more);
// decoding into a caller's buffer gives bytes that can be transferred as they are. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cutout {

enum class VipsDecodeStatus {
  kOk,
  // libvips is not in this process (sharp not loaded yet) or lacks a function: decode through sharp.
  kUnavailable,
  // The image is not the plain photo the caller expected (size, bands, format, an ICC profile, an
  // orientation tag): decode through sharp, which converts it.
  kNotPlain,
  // libvips refused the bytes (corrupt, truncated): `error` holds its message.
  kFailed,
};

// Decodes a JPEG, PNG or WebP (the loader libvips picks for the bytes, as sharp's does; any other
// format is not plain) of `width`×`height` pixels, 3 bands of 8-bit sRGB without an ICC profile or
// an orientation other than 1, into `dst` as RGBA with alpha 255: the bytes sharp gives for
// sharp(input, { failOn: 'truncated', sequentialRead: true }).rotate().toColourspace('srgb')
// .ensureAlpha().raw(). `dst_len` must be width × height × 4. A truncated file fails, as failOn
// 'truncated' makes it. Thread-safe (libvips is).
VipsDecodeStatus DecodePlainRgba(const uint8_t* input, size_t input_len, int width, int height, uint8_t* dst,
                                 size_t dst_len, std::string* error);

// Whether libvips' C API was found in this process (resolving it on first use).
bool LibvipsAvailable();

}  // namespace cutout
