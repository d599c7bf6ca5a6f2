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
// 'truncated' makes it. Photos up to 2.5 MP decode on the calling thread, bigger ones through libvips'
// thread pool. Thread-safe (libvips is).
VipsDecodeStatus DecodePlainRgba(const uint8_t* input, size_t input_len, int width, int height, uint8_t* dst,
                                 size_t dst_len, std::string* error);

// What libvips' header of a JPEG, PNG or WebP says, as sharp's metadata() reads it from the same
// VipsImage (width, height, bands, format, interpretation, hasalpha, the icc-profile-data,
// orientation, interlaced and jpeg-chroma-subsample fields).
struct HeaderFacts {
  const char* format = "";  // "jpeg", "png" or "webp"
  int width = 0, height = 0, bands = 0;
  int band_format = 0;     // VipsBandFormat: 0 uchar, 1 char, 2 ushort, 3 short, 4 uint, 5 int, 6 float, ...
  int interpretation = 0;  // VipsInterpretation: 22 is sRGB
  bool has_alpha = false, has_profile = false, interlaced = false;
  int orientation = 0;  // 0: no orientation field
  std::string chroma_subsampling;
};

// The header of `input`, without decoding pixels, on the calling thread. False (facts unspecified)
// when libvips is not loaded, the bytes are not a JPEG, PNG or WebP, or libvips refuses the header:
// ask sharp, which says why.
bool ProbeHeader(const uint8_t* input, size_t input_len, HeaderFacts* facts);

// Whether libvips' C API was found in this process (resolving it on first use).
bool LibvipsAvailable();

}  // namespace cutout
