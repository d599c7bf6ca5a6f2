// SPDX-License-Identifier: MIT
// PNG = signature, IHDR, IDAT chunks holding one zlib stream, IEND. The zlib stream is a 2-byte header,
// raw deflate data and the adler32 of the filtered rows. Each strip of rows is deflated on its own
// (Z_SYNC_FLUSH ends every strip but the last on a byte boundary, Z_FINISH ends the last) into its own
// IDAT chunk, so a thread also computes its chunk's CRC; the strips' adler32s are combined at the end.
#include "png_encode.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel.h"
#include "png_fast.h"

namespace cutout {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
constexpr size_t kHeaderBytes = sizeof(kSignature) + 12 + 13;  // signature + IHDR chunk
constexpr size_t kIendBytes = 12;
constexpr size_t kChunkOverhead = 12;      // length, type, CRC
constexpr size_t kBatchBytes = 64 * 1024;  // filtered bytes handed to deflate per call

void Put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t Crc(uint32_t crc, const uint8_t* p, size_t n) {
  while (n > 0) {
    const uInt step = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = static_cast<uint32_t>(crc32(crc, p, step));
    p += step;
    n -= step;
  }
  return crc;
}

uint32_t Adler(uint32_t adler, const uint8_t* p, size_t n) {
  while (n > 0) {
    const uInt step = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    adler = static_cast<uint32_t>(adler32(adler, p, step));
    p += step;
    n -= step;
  }
  return adler;
}

// Filter Up on every row but the first (None), chosen by measurement at level 4 on real cut-outs
// (docs/native.md, "PNG encoding"). Against None (what sharp wrote for us before), Up makes the file
// 4–21% smaller on 12–20 MP cut-outs and 21% smaller over the 43 dev cut-outs, for ~3 ms of filtering
// per 12 MP and ~10% more deflate time; it is also what lets Z_RLE compress (None + RLE is 30% larger).
// Sub and Average came out between None and Up; Paeth was 1–10% smaller than Up but costs ~15 ms per
// 12 MP to compute. One filter for all rows keeps the loop trivially vectorised.
void FilterRow(const uint8_t* row, const uint8_t* above, size_t stride, uint8_t* out) {
  if (above == nullptr) {
    out[0] = 0;
    std::memcpy(out + 1, row, stride);
    return;
  }
  out[0] = 2;
  for (size_t i = 0; i < stride; i++) out[1 + i] = static_cast<uint8_t>(row[i] - above[i]);
}

// Room for a raw deflate of n bytes ending in a flush, whatever the level, strategy and zlib build:
// zlib's most conservative deflateBound (fixed-code or stored worst case) plus a sync-flush marker.
size_t DeflateCapacity(size_t n) {
  const size_t fixed = n + (n >> 3) + (n >> 8) + (n >> 9) + 4;
  const size_t stored = n + (n >> 5) + (n >> 7) + (n >> 11) + 7;
  return std::max(fixed, stored) + 5 + 16;
}

// The zlib header (RFC 1950) for a 32 KiB window, with zlib's own FLEVEL choice (kFast: 0, fastest).
uint16_t ZlibHeader(int level, int strategy, bool fast) {
  const unsigned flevel = (fast || strategy >= Z_HUFFMAN_ONLY || level < 2) ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
  unsigned header = ((Z_DEFLATED + ((15 - 8) << 4)) << 8) | (flevel << 6);
  header += 31 - header % 31;
  return static_cast<uint16_t>(header);
}

struct Strip {
  size_t first_row = 0, rows = 0;
  size_t offset = 0;    // where its IDAT chunk starts in the PNG's block (set once it is copied there)
  size_t capacity = 0;  // bytes reserved for its chunk data (zlib header and adler32 included)
  size_t length = 0;    // chunk data written
  uint32_t crc = 0;     // CRC of "IDAT" + data (the last strip's adler32 is added later)
  uint32_t adler = 1;   // adler32 of its filtered rows
  size_t raw = 0;       // filtered bytes (rows × (stride + 1))
};

// One fresh stream per strip, its memory zeroed. Reusing a stream (deflateReset) leaves the last
// strip's bytes in its window, and near the end of its input deflate's match search can look a little
// past the data: the output then depended on which strip a thread had done before (seen in the tests).
// A zeroed fresh stream behaves the same on every thread.
class Deflater {
 public:
  Deflater(int level, int strategy) {
    zs_.zalloc = [](voidpf, uInt items, uInt size) -> voidpf { return std::calloc(items, size); };
    zs_.zfree = [](voidpf, voidpf p) { std::free(p); };
    if (deflateInit2(&zs_, level, Z_DEFLATED, -15, 8, strategy) != Z_OK) {
      throw std::runtime_error("zlib deflateInit2 failed");
    }
  }
  ~Deflater() { deflateEnd(&zs_); }
  Deflater(const Deflater&) = delete;
  Deflater& operator=(const Deflater&) = delete;
  z_stream* operator->() { return &zs_; }
  z_stream* get() { return &zs_; }

 private:
  z_stream zs_{};
};

struct Image {
  const uint8_t* pixels;
  size_t stride;
  size_t height;
  const uint8_t* Row(size_t y) const { return pixels + y * stride; }
  const uint8_t* Above(size_t y) const { return y == 0 ? nullptr : Row(y - 1); }
};

// The chunk's type and, for the stream's first strip, the zlib header at the start of its data;
// returns the header's bytes (0 or 2). The chunk's length and CRC fields are written by the caller.
size_t BeginIdat(uint8_t* chunk, const Strip& s, uint16_t zlib_header) {
  std::memcpy(chunk + 4, "IDAT", 4);
  if (s.first_row != 0) return 0;
  chunk[8] = static_cast<uint8_t>(zlib_header >> 8);
  chunk[9] = static_cast<uint8_t>(zlib_header);
  return 2;
}

// Deflate one strip's filtered rows into the chunk at `chunk` (its data from chunk + 8).
void DeflateStrip(const Image& img, Strip& s, bool last, uint16_t zlib_header, uint8_t* chunk, int level, int strategy,
                  std::vector<uint8_t>& batch) {
  const size_t row_bytes = img.stride + 1;
  Deflater zs(level, strategy);
  uint8_t* const type = chunk + 4;
  uint8_t* const data = type + 4;
  const size_t head = BeginIdat(chunk, s, zlib_header);
  zs->next_out = data + head;
  zs->avail_out = static_cast<uInt>(s.capacity - head - (last ? 4 : 0));
  const size_t rows_per_batch = std::max<size_t>(1, batch.size() / row_bytes);
  s.adler = 1;
  s.raw = 0;
  for (size_t y = s.first_row, end = s.first_row + s.rows; y < end;) {
    const size_t n = std::min(rows_per_batch, end - y);
    uint8_t* b = batch.data();
    for (size_t k = 0; k < n; k++, y++, b += row_bytes) FilterRow(img.Row(y), img.Above(y), img.stride, b);
    const size_t len = n * row_bytes;
    s.adler = Adler(s.adler, batch.data(), len);
    s.raw += len;
    zs->next_in = batch.data();
    zs->avail_in = static_cast<uInt>(len);
    const int flush = y < end ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH;
    const int rc = deflate(zs.get(), flush);
    // All the output fits (DeflateCapacity), so every call consumes its input; running out of room
    // would be a bug, not a condition to recover from.
    if (zs->avail_in != 0 || zs->avail_out == 0 || (flush == Z_FINISH ? rc != Z_STREAM_END : rc != Z_OK)) {
      throw std::runtime_error("zlib deflate failed: " + std::to_string(rc));
    }
  }
  s.length = static_cast<size_t>(zs->next_out - data);
  s.crc = Crc(0, type, 4 + s.length);
}

// The same for kFast (png_fast.h): the strip's filtered rows never leave the encoder's scratch.
void FastStripChunk(const Image& img, int bpp, Strip& s, bool last, bool stored, uint16_t zlib_header, uint8_t* chunk,
                    FastScratch& scratch) {
  uint8_t* const type = chunk + 4;
  uint8_t* const data = type + 4;
  const size_t head = BeginIdat(chunk, s, zlib_header);
  const FastStrip strip{img.pixels, img.stride, bpp, s.first_row, s.rows, last, stored};
  s.length = head + FastDeflateStrip(strip, scratch, data + head, &s.adler);
  s.raw = s.rows * (img.stride + 1);
  s.crc = Crc(0, type, 4 + s.length);
}

}  // namespace

int PngStripRows(int width, int channels) {
  const size_t stride = static_cast<size_t>(width) * channels;
  return static_cast<int>(std::min<size_t>((kPngStripBytes + stride - 1) / stride, kPngMaxSide));
}

void PngFile::WriteTo(uint8_t* dst) const {
  for (const Piece& p : pieces_) {
    std::memcpy(dst, scratch_.get() + p.offset, p.length);
    dst += p.length;
  }
}

PngFile EncodePng(const uint8_t* pixels, int width, int height, int channels, const PngOptions& options) {
  if (width < 1 || height < 1 || width > kPngMaxSide || height > kPngMaxSide || channels < 1 || channels > 4) {
    throw std::invalid_argument("bad PNG dimensions");
  }
  if (options.level < 0 || options.level > 9 || options.threads < 1 || options.threads > 64) {
    throw std::invalid_argument("bad PNG options");
  }
  const bool fast = options.strategy == PngStrategy::kFast;
  const int strategy = options.strategy == PngStrategy::kRle ? Z_RLE : Z_DEFAULT_STRATEGY;
  const Image img{pixels, static_cast<size_t>(width) * channels, static_cast<size_t>(height)};
  const size_t row_bytes = img.stride + 1;

  // Each strip is written into its thread's slot (room for its worst case), then copied to the next
  // free bytes of the PNG's block, so the chunks lie packed in the order they finish: the block is
  // sized for the worst case (address space only) but only the compressed bytes are touched. Worst-case
  // slots in the block itself would touch a page near every slot's start, which on the block cache's
  // huge pages made the whole worst case (1.5 × the pixels) resident. Both come from the block cache,
  // so while the pool is busy the next encode finds them mapped.
  const size_t strip_rows = static_cast<size_t>(PngStripRows(width, channels));
  std::vector<Strip> strips((img.height + strip_rows - 1) / strip_rows);
  size_t total = kHeaderBytes;
  for (size_t i = 0; i < strips.size(); i++) {
    Strip& s = strips[i];
    s.first_row = i * strip_rows;
    s.rows = std::min(strip_rows, img.height - s.first_row);
    const size_t raw = s.rows * row_bytes;
    s.capacity =
        (fast ? FastDeflateBound(raw) : DeflateCapacity(raw)) + (i == 0 ? 2 : 0) + (i + 1 == strips.size() ? 4 : 0);
    total += kChunkOverhead + s.capacity;
  }
  total += kIendBytes;
  PngFile png;
  png.scratch_ = ScratchArray<uint8_t>(total);
  uint8_t* const base = png.scratch_.get();

  // Strips go to threads from a shared counter (transparent strips deflate faster than busy ones).
  const uint16_t zlib_header = ZlibHeader(options.level, strategy, fast);
  const int workers = std::min<int>(options.threads, static_cast<int>(strips.size()));
  std::atomic<size_t> next{0};
  std::atomic<size_t> used{kHeaderBytes};
  ParallelFor(workers, workers, 1, [&](int begin, int end) {
    for (int w = begin; w < end; w++) {
      ScratchBuffer<uint8_t> slot;
      FastScratch scratch;
      std::vector<uint8_t> batch;
      if (!fast) batch.resize(std::max(kBatchBytes, row_bytes));
      for (size_t i; (i = next.fetch_add(1)) < strips.size();) {
        Strip& s = strips[i];
        const bool last = i + 1 == strips.size();
        uint8_t* const at = slot.Reserve(kChunkOverhead + s.capacity);
        if (fast) {
          FastStripChunk(img, channels, s, last, options.level == 0, zlib_header, at, scratch);
        } else {
          DeflateStrip(img, s, last, zlib_header, at, options.level, strategy, batch);
        }
        // Length field, "IDAT", data; then room for the CRC (and the last strip's adler32).
        s.offset = used.fetch_add(kChunkOverhead + s.length + (last ? 4 : 0));
        std::memcpy(base + s.offset, at, 8 + s.length);
      }
    }
  });
  const size_t iend_at = used.load();

  // The last chunk ends with the stream's adler32.
  uint32_t adler = strips[0].adler;
  for (size_t i = 1; i < strips.size(); i++) {
    adler = static_cast<uint32_t>(adler32_combine(adler, strips[i].adler, static_cast<z_off_t>(strips[i].raw)));
  }
  Strip& tail = strips.back();
  uint8_t* adler_at = base + tail.offset + 8 + tail.length;
  Put32(adler_at, adler);
  tail.crc = Crc(tail.crc, adler_at, 4);
  tail.length += 4;

  std::memcpy(base, kSignature, sizeof(kSignature));
  uint8_t* ihdr = base + sizeof(kSignature);
  Put32(ihdr, 13);
  std::memcpy(ihdr + 4, "IHDR", 4);
  Put32(ihdr + 8, static_cast<uint32_t>(width));
  Put32(ihdr + 12, static_cast<uint32_t>(height));
  static constexpr uint8_t kColourType[5] = {0, 0, 4, 2, 6};      // grey, grey+alpha, RGB, RGBA
  const uint8_t fields[5] = {8, kColourType[channels], 0, 0, 0};  // depth, colour, deflate, filters, no interlace
  std::memcpy(ihdr + 16, fields, 5);
  Put32(ihdr + 21, Crc(0, ihdr + 4, 17));

  png.pieces_.push_back({0, kHeaderBytes});
  for (const Strip& s : strips) {
    uint8_t* chunk = base + s.offset;
    Put32(chunk, static_cast<uint32_t>(s.length));
    Put32(chunk + 8 + s.length, s.crc);
    png.pieces_.push_back({s.offset, kChunkOverhead + s.length});
  }
  static constexpr uint8_t kIend[kIendBytes] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
  std::memcpy(base + iend_at, kIend, kIendBytes);
  png.pieces_.push_back({iend_at, kIendBytes});
  for (const auto& p : png.pieces_) png.size_ += p.length;
  return png;
}

}  // namespace cutout
