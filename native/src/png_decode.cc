// SPDX-License-Identifier: MIT
#include "png_decode.h"

#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__SSE4_1__)
#include <immintrin.h>
#endif

namespace cutout {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr int kBpp = 3;                    // bytes per pixel: 8-bit RGB only
constexpr size_t kPad = 16;                // bytes readable past a filtered row's end (16-byte loads)
constexpr size_t kBatchBytes = 64 * 1024;  // inflated at a time

uint32_t Get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 24 | static_cast<uint32_t>(p[1]) << 16 | static_cast<uint32_t>(p[2]) << 8 |
         p[3];
}

struct Chunk {
  uint32_t length = 0;
  const uint8_t* type = nullptr;
  const uint8_t* data = nullptr;
  bool Is(const char* t) const { return std::memcmp(type, t, 4) == 0; }
};

// The chunk at `at` (advanced past it), if it lies whole within the file and its CRC is right.
bool NextChunk(const uint8_t* in, size_t len, size_t& at, Chunk& c) {
  if (len - at < 12) return false;
  c.length = Get32(in + at);
  if (c.length > 0x7fffffffu || c.length > len - at - 12) return false;
  c.type = in + at + 4;
  c.data = in + at + 8;
  if (static_cast<uint32_t>(crc32(0, c.type, 4 + c.length)) != Get32(c.data + c.length)) return false;
  at += 12 + static_cast<size_t>(c.length);
  return true;
}

// Ancillary chunks that leave the pixels libvips gives for an 8-bit RGB PNG as they are (checked by
// test/native/png-decode.test.ts against libvips itself): metadata only. Any other chunk (an ICC
// profile, transparency, a palette, an EXIF orientation, one this does not know) sends the file to
// libvips.
bool Harmless(const Chunk& c) {
  for (const char* t : {"pHYs", "tEXt", "zTXt", "iTXt", "tIME", "sRGB", "gAMA", "cHRM", "bKGD", "sBIT"})
    if (c.Is(t)) return true;
  return false;
}

// A row's filter undone straight into its RGBA row of dst: `raw` the filtered bytes (3 a pixel,
// kPad readable past the end), `up` the row above as decoded (RGBA; zeros above the first), `out`
// this row (RGBA, alpha 255). Sub, Average and Paeth depend on the pixel to the left, so a pixel at a
// time, its bytes in one vector, as libpng's SSE2 filters do; carried in a register and stored
// whole (4 bytes), never read back. None and Up, four pixels at a time.
#if defined(__SSE4_1__)
inline __m128i Px(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return _mm_cvtsi32_si128(static_cast<int>(v));
}

inline void PutPx(uint8_t* p, __m128i v) {
  const uint32_t x = static_cast<uint32_t>(_mm_cvtsi128_si32(v)) | 0xff000000u;
  std::memcpy(p, &x, 4);
}

// Four RGB pixels (16 bytes loaded, 12 used) spread to RGBA with zero alpha bytes.
inline __m128i Spread4(const uint8_t* rgb) {
  const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(rgb)), spread);
}

// None (up == nullptr) or Up.
void UnfilterNoneOrUp(const uint8_t* raw, const uint8_t* up, uint8_t* out, int w) {
  const __m128i alpha = _mm_set1_epi32(static_cast<int>(0xff000000u));
  int x = 0;
  for (; x + 4 <= w; x += 4) {
    __m128i v = Spread4(raw + 3 * x);
    if (up) v = _mm_add_epi8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(up + 4 * x)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * x), _mm_or_si128(v, alpha));
  }
  for (; x < w; ++x) PutPx(out + 4 * x, up ? _mm_add_epi8(Px(raw + 3 * x), Px(up + 4 * x)) : Px(raw + 3 * x));
}

void UnfilterSub(const uint8_t* raw, uint8_t* out, int w) {
  __m128i a = _mm_setzero_si128();
  for (int x = 0; x < w; ++x) {
    a = _mm_add_epi8(a, Px(raw + 3 * x));
    PutPx(out + 4 * x, a);
  }
}

void UnfilterAvg(const uint8_t* raw, const uint8_t* up, uint8_t* out, int w) {
  __m128i a = _mm_setzero_si128();
  const __m128i one = _mm_set1_epi8(1);
  for (int x = 0; x < w; ++x) {
    const __m128i b = Px(up + 4 * x);
    // ⌊(a + b) / 2⌋: pavgb rounds up, so take the carried-in bit back off.
    const __m128i avg = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
    a = _mm_add_epi8(Px(raw + 3 * x), avg);
    PutPx(out + 4 * x, a);
  }
}

void UnfilterPaeth(const uint8_t* raw, const uint8_t* up, uint8_t* out, int w) {
  // In 16-bit lanes: a left, b above, c above-left.
  const __m128i zero = _mm_setzero_si128(), low = _mm_set1_epi16(0xff);
  __m128i a = zero, c = zero;
  for (int x = 0; x < w; ++x) {
    const __m128i b = _mm_unpacklo_epi8(Px(up + 4 * x), zero);
    const __m128i d = _mm_unpacklo_epi8(Px(raw + 3 * x), zero);
    const __m128i pa0 = _mm_sub_epi16(b, c), pb0 = _mm_sub_epi16(a, c);
    const __m128i pa = _mm_abs_epi16(pa0), pb = _mm_abs_epi16(pb0), pc = _mm_abs_epi16(_mm_add_epi16(pa0, pb0));
    const __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
    // a if pa is the smallest; else b if pb is; else c (the predictor's order of ties).
    const __m128i pick_b = _mm_blendv_epi8(c, b, _mm_cmpeq_epi16(pb, smallest));
    const __m128i nearest = _mm_blendv_epi8(pick_b, a, _mm_cmpeq_epi16(pa, smallest));
    a = _mm_and_si128(_mm_add_epi16(nearest, d), low);
    PutPx(out + 4 * x, _mm_packus_epi16(a, a));
    c = b;
  }
}

bool UnfilterRow(uint8_t type, const uint8_t* raw, const uint8_t* up, uint8_t* out, int w) {
  switch (type) {
    case 0:
      UnfilterNoneOrUp(raw, nullptr, out, w);
      return true;
    case 1:
      UnfilterSub(raw, out, w);
      return true;
    case 2:
      UnfilterNoneOrUp(raw, up, out, w);
      return true;
    case 3:
      UnfilterAvg(raw, up, out, w);
      return true;
    case 4:
      UnfilterPaeth(raw, up, out, w);
      return true;
    default:
      return false;
  }
}
#else
bool UnfilterRow(uint8_t type, const uint8_t* raw, const uint8_t* up, uint8_t* out, int w) {
  if (type > 4) return false;
  for (int x = 0; x < w; ++x)
    for (int k = 0; k < kBpp; ++k) {
      const int a = x > 0 ? out[4 * x - 4 + k] : 0, b = up[4 * x + k], c = x > 0 ? up[4 * x - 4 + k] : 0;
      int pred = 0;
      if (type == 1) pred = a;
      if (type == 2) pred = b;
      if (type == 3) pred = (a + b) >> 1;
      if (type == 4) {
        const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      out[4 * x + k] = static_cast<uint8_t>(raw[3 * x + k] + pred);
      out[4 * x + 3] = 255;
    }
  return true;
}
#endif

struct InflateEnd {
  z_stream* zs;
  ~InflateEnd() { inflateEnd(zs); }
};

}  // namespace

bool IsPng(const uint8_t* input, size_t input_len) {
  return input && input_len >= sizeof(kSignature) && std::memcmp(input, kSignature, sizeof(kSignature)) == 0;
}

bool DecodePlainPng(const uint8_t* in, size_t len, int width, int height, uint8_t* dst, size_t dst_len) {
  if (!IsPng(in, len) || !dst || width <= 0 || height <= 0 || dst_len != static_cast<size_t>(width) * height * 4)
    return false;
  size_t at = sizeof(kSignature);
  Chunk c;
  // IHDR: width × height, 8-bit RGB (colour type 2), deflate, adaptive filters, not interlaced.
  if (!NextChunk(in, len, at, c) || !c.Is("IHDR") || c.length != 13) return false;
  if (Get32(c.data) != static_cast<uint32_t>(width) || Get32(c.data + 4) != static_cast<uint32_t>(height)) return false;
  if (c.data[8] != 8 || c.data[9] != 2 || c.data[10] != 0 || c.data[11] != 0 || c.data[12] != 0) return false;
  do {
    if (!NextChunk(in, len, at, c)) return false;
  } while (Harmless(c));
  if (!c.Is("IDAT")) return false;

  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return false;
  const InflateEnd end{&zs};
  zs.next_in = const_cast<Bytef*>(c.data);
  zs.avail_in = c.length;
  // Feeds the next IDAT's data once this one's is used up; false at any other chunk.
  const auto refill = [&]() {
    while (zs.avail_in == 0) {
      if (!NextChunk(in, len, at, c) || !c.Is("IDAT")) return false;
      zs.next_in = const_cast<Bytef*>(c.data);
      zs.avail_in = c.length;
    }
    return true;
  };
  const size_t row_bytes = 1 + static_cast<size_t>(width) * kBpp;  // the filter byte and the row
  const size_t rgba_stride = static_cast<size_t>(width) * 4;
  // Rows are inflated kBatchBytes at a time (inflate's fast loop stops 258 bytes short of the end of
  // its output: a row at a time, a tenth of the time went to its slow one), then unfiltered one by
  // one. After them, room for whole-vector loads and zeros for the row above the first.
  const int batch = static_cast<int>(std::clamp<size_t>(kBatchBytes / row_bytes, 1, static_cast<size_t>(height)));
  const size_t batch_bytes = static_cast<size_t>(batch) * row_bytes;
  std::unique_ptr<uint8_t[]> scratch(new uint8_t[batch_bytes + kPad + rgba_stride]());
  uint8_t* const rows = scratch.get();
  const uint8_t* up = rows + batch_bytes + kPad;
  int status = Z_OK;
  for (int y = 0; y < height; y += batch) {
    const int n = std::min(batch, height - y);
    zs.next_out = rows;
    zs.avail_out = static_cast<uInt>(n * row_bytes);
    while (zs.avail_out > 0) {
      if (status == Z_STREAM_END || !refill()) return false;  // the stream ends short of the image
      status = inflate(&zs, Z_NO_FLUSH);
      if (status != Z_OK && status != Z_STREAM_END) return false;
    }
    for (int k = 0; k < n; ++k) {
      const uint8_t* row = rows + k * row_bytes;
      uint8_t* out = dst + static_cast<size_t>(y + k) * rgba_stride;
      if (!UnfilterRow(row[0], row + 1, up, out, width)) return false;
      up = out;
    }
  }
  // The stream must end exactly here (its adler32 checked by inflate), in the last IDAT, and the file
  // with IEND: whatever else libvips makes of it, it decides.
  uint8_t extra;
  while (status != Z_STREAM_END) {
    if (!refill()) return false;
    zs.next_out = &extra;
    zs.avail_out = 1;
    status = inflate(&zs, Z_NO_FLUSH);
    if ((status != Z_OK && status != Z_STREAM_END) || zs.avail_out == 0) return false;
  }
  if (zs.avail_in != 0) return false;
  do {
    if (!NextChunk(in, len, at, c)) return false;
  } while (Harmless(c) || (c.Is("IDAT") && c.length == 0));  // (empty IDATs after the stream: nothing to read)
  return c.Is("IEND") && at == len;
}

}  // namespace cutout
