// SPDX-License-Identifier: MIT
// A plain PNG (8-bit RGB, not interlaced, no chunk that changes its pixels) decoded straight into RGBA
// memory the caller owns, with Node's zlib (the copy png_encode.cc deflates with): the bytes libvips
// gives for it through DecodePlainRgba, in under half the time (docs/native.md, "PNG decoding": libvips'
// PNG loader hands rows between threads and unfilters a byte at a time). Only a file that is exactly
// right is decoded here: any other PNG, and anything wrong with one (a bad CRC, a chunk it does not
// know, a truncated or over-long stream, bytes after IEND), is left to libvips, which decodes or
// refuses it as it always has. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cutout {

// Whether `input` starts with the PNG signature.
bool IsPng(const uint8_t* input, size_t input_len);

// Decodes `input` into dst (width × height × 4 bytes: RGB and alpha 255) when it is a plain 8-bit RGB
// PNG of width × height pixels whose every chunk checks out; returns false, dst's contents then
// unspecified, for anything else (decode it with libvips). Thread-safe.
bool DecodePlainPng(const uint8_t* input, size_t input_len, int width, int height, uint8_t* dst, size_t dst_len);

}  // namespace cutout
