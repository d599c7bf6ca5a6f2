// SPDX-License-Identifier: MIT
// The fast PNG strip encoder (PngStrategy::kFast; the approach of fpnge, written here from its idea):
// each row is filtered Sub, Up and Paeth at once with SIMD and the one with the smallest estimated
// bit count is kept; runs of a repeated byte become deflate matches at distance 1; one Huffman code,
// built from the strip's run lengths and a sample of its literals, codes the whole strip as one
// dynamic block, written 64 bits at a time. No LZ77 search, so no zlib. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "scratch.h"

namespace cutout {

// One strip of rows of an 8-bit image. The strip's first row is filtered against the image row
// above it (or the zero row for row 0), so strips are independent of each other and of the threads.
struct FastStrip {
  const uint8_t* pixels;  // the whole image, row 0 first, no padding
  size_t stride;          // bytes per row (width × bpp)
  int bpp;                // bytes per pixel, 1..4
  size_t first_row, rows;
  bool last;    // the stream's last strip: its final block has BFINAL set
  bool stored;  // level 0: stored blocks only (still filtered)
};

// `literals` bytes coded as literals, then `run` more copies of the byte before them (matches at
// distance 1, cut into lengths of 3..258).
struct FastSegment {
  uint32_t literals, run;
};

// Buffers one thread reuses strip after strip; nothing in them carries over from one strip to the next.
// They come from the block cache (scratch.h), so the next photo's encode finds their pages mapped
// instead of faulting ~2 MB in per encode (test/integration/pool-faults).
struct FastScratch {
  ScratchBuffer<uint8_t> filtered;      // the strip's filtered rows, type byte first
  ScratchBuffer<uint8_t> zero_row;      // "above" for image row 0
  ScratchBuffer<FastSegment> segments;  // at most one per kMinRun + 1 bytes, plus the last
};

// Room FastDeflateStrip needs for a strip of `raw` filtered bytes (rows × (stride + 1)): what a
// dynamic block can take before it is found larger than stored blocks (1.5 × raw at most), plus 8
// bytes of slack for the 64-bit stores. What it returns is never more than the stored blocks.
size_t FastDeflateBound(size_t raw);

// Writes the strip as raw deflate data starting on a byte boundary and ending on one: one dynamic
// Huffman block (or stored blocks where those come out smaller), followed by an empty stored block
// unless the strip is the last (as zlib's Z_SYNC_FLUSH would). Returns the bytes written; *adler is
// the adler32 (from 1) of the strip's filtered rows.
size_t FastDeflateStrip(const FastStrip& strip, FastScratch& scratch, uint8_t* out, uint32_t* adler);

}  // namespace cutout
