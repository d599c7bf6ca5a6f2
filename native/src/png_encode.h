// SPDX-License-Identifier: MIT
// 8-bit PNG encoder (grey, grey+alpha, RGB, RGBA) whose deflate runs on several threads, pigz-style:
// the rows are cut into strips, each strip is deflated on its own and the pieces are joined into one
// zlib stream. Pure C++ (zlib is the copy Node exports; CMakeLists.txt), no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "scratch.h"

namespace cutout {

// Raw bytes per strip (rounded up to whole rows). Strip boundaries depend only on the image's width,
// height and channels, never on the thread count, so the output bytes are the same for any thread
// count. Cutting costs the flush markers and the restarted Huffman blocks: +0.04% at 12 MP against one
// stream (256 KiB strips: +0.2%). Priming each strip with the 32 KiB before it (deflateSetDictionary,
// as pigz does) saved only 0.003% on filtered photos, so strips start cold (docs/native.md).
constexpr size_t kPngStripBytes = size_t{1} << 20;

// Widest/tallest image accepted: far beyond any photo, and keeps one row's deflate output well
// inside one IDAT chunk's 2^31 - 1 bytes.
constexpr int kPngMaxSide = 1 << 24;

// zlib strategy. With the Up filter, kRle (matches of distance 1 only, then Huffman) deflates 2–3x
// faster than kDefault at level 4; the file is 4–5% smaller on large mostly-transparent cut-outs, up
// to 25% larger on textured subjects, +1.3% over the 43 dev cut-outs and +33% on an opaque photo
// (docs/native.md, "PNG encoding").
//
// kFast does not use zlib's deflate: per-row filter choice (Sub, Up, Paeth), runs as distance-1
// matches and one Huffman code per strip (png_fast.h), several times faster than kRle (docs/native.md).
enum class PngStrategy {
  kDefault,  // zlib's LZ77 + Huffman at the given level
  kRle,      // Z_RLE; the level only tells stored (0) from compressed (1..9)
  kFast,     // png_fast.h; the level only tells stored (0) from compressed (1..9)
};

struct PngOptions {
  int level = 4;    // zlib level 0..9
  int threads = 1;  // 1..64; never changes the output bytes
  PngStrategy strategy = PngStrategy::kDefault;
};

// Rows per strip for an image `width` pixels wide with `channels` bytes per pixel.
int PngStripRows(int width, int channels);

// An encoded PNG still in the encoder's scratch (its IDAT chunks lie apart): size() bytes, written out
// in one pass by WriteTo. So the caller picks the final home (a JS ArrayBuffer: an external one would
// be untransferable) and the compressed bytes are copied once.
class PngFile {
 public:
  size_t size() const { return size_; }
  void WriteTo(uint8_t* dst) const;

 private:
  friend PngFile EncodePng(const uint8_t*, int, int, int, const PngOptions&);
  struct Piece {
    size_t offset, length;
  };
  // From the block cache (scratch.h): while the pool is busy the next encode finds its pages mapped.
  ScratchArray<uint8_t> scratch_;
  std::vector<Piece> pieces_;
  size_t size_ = 0;
};

// Encode `pixels` (height rows of width × channels bytes, no padding). Throws std::invalid_argument
// on bad dimensions/options, std::bad_alloc, or std::runtime_error if zlib fails.
PngFile EncodePng(const uint8_t* pixels, int width, int height, int channels, const PngOptions& options);

}  // namespace cutout
