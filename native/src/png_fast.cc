// SPDX-License-Identifier: MIT
// How a strip is encoded (png_fast.h), in three passes:
// 1. Row by row: the Sub, Up and Paeth residuals of the row (32 bytes at a time with AVX2), each
//    costed by an estimate of its bits (kCostLow/kCostHigh below), Paeth's written into the strip
//    buffer and summed for adler32 in the same pass; where Up or Sub costs less, its residuals are
//    written over them. Then the row's runs are found (a run: at least kMinRun bytes equal to the byte
//    before them) and counted, and one literal in kLiteralSample.
// 2. From those counts, length-limited Huffman codes (package-merge) for one dynamic block.
// 3. The block: its header, then each segment's literals and its run as matches at distance 1.
// The scalar build (no AVX2) makes the same choices and so the same bytes.
#include "png_fast.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace cutout {
namespace {

// ---------------------------------------------------------------------------------------------
// Filters

enum FilterType : uint8_t { kNone = 0, kSub = 1, kUp = 2, kPaeth = 4 };

constexpr int kCandidates = 3;
constexpr uint8_t kCandidateType[kCandidates] = {kUp, kSub, kPaeth};  // a tie goes to the first

// Estimated bits of a residual r, by |r| (r read as a signed byte): kCostLow[|r|] for |r| < 16,
// kCostHigh[|r| / 16] above (|r| = 128 is -128: index 8). Roughly the code lengths a photo's
// residuals get (1 + 2·log2(|r| + 1), capped at 15). Every kCostHigh[k ≥ 1] must be at least every
// kCostLow: the SIMD lookup takes the larger of the two.
constexpr uint8_t kCostLow[16] = {1, 3, 4, 5, 5, 6, 6, 7, 7, 7, 7, 8, 8, 8, 8, 8};
constexpr uint8_t kCostHigh[16] = {0, 9, 10, 11, 12, 13, 14, 15, 15, 15, 15, 15, 15, 15, 15, 15};

// The scalar form of the SIMD cost lookup (same table reads, so the same sums).
inline uint32_t ResidualCost(uint8_t r) {
  const uint8_t m = (r & 0x80) ? static_cast<uint8_t>(0u - r) : r;
  const uint8_t low = (m & 0x80) ? 0 : kCostLow[m & 15];
  return std::max(low, kCostHigh[m >> 4]);
}

inline uint8_t PaethPredictor(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

#if defined(__AVX2__)

inline __m256i AbsDiff(__m256i x, __m256i y) { return _mm256_or_si256(_mm256_subs_epu8(x, y), _mm256_subs_epu8(y, x)); }
inline __m256i LessEq(__m256i x, __m256i y) { return _mm256_cmpeq_epi8(_mm256_min_epu8(x, y), x); }  // unsigned

// Paeth's predictor on bytes without widening: pa = |b - c| and pb = |a - c| fit a byte, and
// pc = |(a - c) + (b - c)| is pa + pb when the two differences have the same sign (saturated at 255,
// which keeps every comparison with pa and pb the same), |pa - pb| otherwise.
inline __m256i PaethPredict(__m256i a, __m256i b, __m256i c) {
  const __m256i pa = AbsDiff(b, c), pb = AbsDiff(a, c);
  const __m256i a_up = _mm256_cmpeq_epi8(_mm256_max_epu8(a, c), a);
  const __m256i b_up = _mm256_cmpeq_epi8(_mm256_max_epu8(b, c), b);
  const __m256i pc = _mm256_blendv_epi8(AbsDiff(pa, pb), _mm256_adds_epu8(pa, pb), _mm256_cmpeq_epi8(a_up, b_up));
  const __m256i take_a = _mm256_and_si256(LessEq(pa, pb), LessEq(pa, pc));
  return _mm256_blendv_epi8(_mm256_blendv_epi8(c, b, LessEq(pb, pc)), a, take_a);
}

inline __m256i Cost(__m256i r, __m256i low, __m256i high) {
  const __m256i m = _mm256_abs_epi8(r);
  const __m256i nibble = _mm256_and_si256(_mm256_srli_epi16(m, 4), _mm256_set1_epi8(15));
  return _mm256_max_epu8(_mm256_shuffle_epi8(low, m), _mm256_shuffle_epi8(high, nibble));
}

inline __m256i Load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline void Store(uint8_t* p, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }

// row[from, from + 32), the bytes outside [0, n) read as zero.
inline __m256i LoadPartial(const uint8_t* row, ptrdiff_t from, size_t n) {
  alignas(32) uint8_t tmp[32] = {};
  const ptrdiff_t lo = std::max<ptrdiff_t>(from, 0), hi = std::min<ptrdiff_t>(from + 32, static_cast<ptrdiff_t>(n));
  if (hi > lo) std::memcpy(tmp + (lo - from), row + lo, static_cast<size_t>(hi - lo));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(tmp));
}

inline __m256i FirstBytes(size_t k) {  // 0xff in bytes [0, k), k ≤ 32
  const __m256i iota = _mm256_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                        22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
  return _mm256_cmpgt_epi8(_mm256_set1_epi8(static_cast<char>(k)), iota);
}

inline uint64_t Sum64(__m256i v) {
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

#endif  // __AVX2__

// adler32 (RFC 1950) kept as running sums, fed bytes or whole 32-byte vectors, so the filter pass can
// take it from the residuals it has in registers instead of reading the row again.
constexpr uint32_t kAdlerMod = 65521;

class Adler32 {
 public:
  explicit Adler32(uint32_t adler) : s1_(adler & 0xffff), s2_(adler >> 16) {}

  void Bytes(const uint8_t* p, size_t n) {
#if defined(__AVX2__)
    for (; n >= 32; n -= 32, p += 32) Vector(Load(p));
    Reduce();
#endif
    while (n > 0) {
      const size_t chunk = std::min<size_t>(n, 5552);
      for (size_t k = 0; k < chunk; k++) {
        s1_ += p[k];
        s2_ += s1_;
      }
      s1_ %= kAdlerMod;
      s2_ %= kAdlerMod;
      p += chunk;
      n -= chunk;
    }
  }

#if defined(__AVX2__)
  // Per 32-byte vector: s1 gains the bytes' sum, s2 gains 32·s1 (before) plus Σ (32 - i)·byte[i]. At
  // most 173 vectors (5536 bytes) between reductions keeps every 32-bit lane from overflowing.
  void Vector(__m256i v) {
    const __m256i weights = _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
                                             13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    prefix_ = _mm256_add_epi32(prefix_, v1_);
    v1_ = _mm256_add_epi32(v1_, _mm256_sad_epu8(v, _mm256_setzero_si256()));
    v2_ = _mm256_add_epi32(v2_, _mm256_madd_epi16(_mm256_maddubs_epi16(v, weights), _mm256_set1_epi16(1)));
    if (++vectors_ == 173) Reduce();
  }
#endif

  // A byte `first`, then n bytes whose sums from zero (an Adler32(0)'s Value()) are `rest`: how a row's
  // sums join the strip's once its filter-type byte is known.
  void Append(uint8_t first, uint32_t rest, size_t n) {
#if defined(__AVX2__)
    Reduce();
#endif
    s1_ = (s1_ + first) % kAdlerMod;
    s2_ = (s2_ + s1_ * ((n + 1) % kAdlerMod) + (rest >> 16)) % kAdlerMod;
    s1_ = (s1_ + (rest & 0xffff)) % kAdlerMod;
  }

  uint32_t Value() {
#if defined(__AVX2__)
    Reduce();
#endif
    return static_cast<uint32_t>(s2_ << 16 | s1_);
  }

 private:
#if defined(__AVX2__)
  void Reduce() {
    if (vectors_ == 0) return;
    alignas(32) uint32_t a[8], b[8], c[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(a), v1_);
    _mm256_store_si256(reinterpret_cast<__m256i*>(b), v2_);
    _mm256_store_si256(reinterpret_cast<__m256i*>(c), prefix_);
    uint64_t sum1 = 0, sum2 = 0, sum_prefix = 0;
    for (int k = 0; k < 8; k++) {
      sum1 += a[k];
      sum2 += b[k];
      sum_prefix += c[k];
    }
    s2_ = (s2_ + 32 * vectors_ * s1_ + 32 * sum_prefix + sum2) % kAdlerMod;
    s1_ = (s1_ + sum1) % kAdlerMod;
    v1_ = v2_ = prefix_ = _mm256_setzero_si256();
    vectors_ = 0;
  }
  __m256i v1_ = _mm256_setzero_si256(), v2_ = _mm256_setzero_si256(), prefix_ = _mm256_setzero_si256();
  uint64_t vectors_ = 0;
#endif
  uint64_t s1_, s2_;
};

#if defined(__AVX2__)
// Whether a block's pixels and their left, up and up-left neighbours are all zero.
inline bool AllZero(__m256i x, __m256i a, __m256i b, __m256i c) {
  const __m256i any = _mm256_or_si256(_mm256_or_si256(x, a), _mm256_or_si256(b, c));
  return _mm256_testz_si256(any, any);
}

// FilterRow (below) with AVX2, 32 bytes at a time.
bool FilterRowAvx2(const uint8_t* cur, const uint8_t* above, size_t n, int bpp, uint8_t* dst, Adler32& sums,
                   uint64_t cost[kCandidates]) {
  const __m256i low = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kCostLow)));
  const __m256i high = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kCostHigh)));
  const __m256i zero = _mm256_setzero_si256(), all = _mm256_set1_epi8(-1);
  __m256i acc_up = zero, acc_sub = zero, acc_paeth = zero;
  bool edges_zero;  // the first and the last block's pixels and neighbours
  auto block = [&](size_t i, __m256i x, __m256i a, __m256i b, __m256i c, __m256i valid) {
    const __m256i up = _mm256_sub_epi8(x, b), sub = _mm256_sub_epi8(x, a);
    const __m256i paeth = _mm256_sub_epi8(x, PaethPredict(a, b, c));
    Store(dst + i, paeth);
    acc_up = _mm256_add_epi64(acc_up, _mm256_sad_epu8(_mm256_and_si256(Cost(up, low, high), valid), zero));
    acc_sub = _mm256_add_epi64(acc_sub, _mm256_sad_epu8(_mm256_and_si256(Cost(sub, low, high), valid), zero));
    acc_paeth = _mm256_add_epi64(acc_paeth, _mm256_sad_epu8(_mm256_and_si256(Cost(paeth, low, high), valid), zero));
    return paeth;
  };
  const ptrdiff_t back = bpp;
  // The first block reads left of the row's start (zeros there), the last past its end.
  {
    const __m256i x = LoadPartial(cur, 0, n), a = LoadPartial(cur, -back, n), b = LoadPartial(above, 0, n),
                  c = LoadPartial(above, -back, n);
    edges_zero = AllZero(x, a, b, c);
    const __m256i paeth = block(0, x, a, b, c, FirstBytes(std::min<size_t>(n, 32)));
    if (n >= 32) sums.Vector(paeth);
  }
  // Where the pixel, its left, up and up-left neighbours are all zero (the transparent background),
  // every residual is zero and costs the same: nothing to compute.
  const uint64_t zero_cost = 32 * kCostLow[0];
  uint64_t zero_blocks = 0;
  size_t i = 32;
  for (; i + 32 <= n; i += 32) {
    const __m256i x = Load(cur + i), a = Load(cur + i - back), b = Load(above + i), c = Load(above + i - back);
    if (AllZero(x, a, b, c)) {
      Store(dst + i, zero);
      sums.Vector(zero);
      zero_blocks++;
      continue;
    }
    sums.Vector(block(i, x, a, b, c, all));
  }
  if (i < n) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(i);
    const __m256i x = LoadPartial(cur, at, n), a = LoadPartial(cur, at - back, n), b = LoadPartial(above, at, n),
                  c = LoadPartial(above, at - back, n);
    edges_zero = edges_zero && AllZero(x, a, b, c);
    block(i, x, a, b, c, FirstBytes(n - i));
  }
  if (n < 32)
    sums.Bytes(dst, n);
  else if (i < n)
    sums.Bytes(dst + i, n - i);
  cost[0] = Sum64(acc_up) + zero_blocks * zero_cost;
  cost[1] = Sum64(acc_sub) + zero_blocks * zero_cost;
  cost[2] = Sum64(acc_paeth) + zero_blocks * zero_cost;
  return edges_zero && zero_blocks == (n >= 32 ? (n - 32) / 32 : 0);
}

// Up's (K = 0) or Sub's (K = 1) residuals of 32 bytes.
template <int K>
inline __m256i Residuals(__m256i x, __m256i a, __m256i b) {
  if constexpr (K == 0)
    return _mm256_sub_epi8(x, b);
  else
    return _mm256_sub_epi8(x, a);
}

template <int K>
void WriteResidualsOf(const uint8_t* cur, const uint8_t* above, size_t n, int bpp, uint8_t* dst, Adler32& sums) {
  const ptrdiff_t back = bpp;
  const __m256i first = Residuals<K>(LoadPartial(cur, 0, n), LoadPartial(cur, -back, n), LoadPartial(above, 0, n));
  Store(dst, first);
  if (n < 32) {
    sums.Bytes(dst, n);
    return;
  }
  sums.Vector(first);
  size_t i = 32;
  for (; i + 32 <= n; i += 32) {
    const __m256i r = Residuals<K>(Load(cur + i), Load(cur + i - back), Load(above + i));
    Store(dst + i, r);
    sums.Vector(r);
  }
  if (i < n) {
    const ptrdiff_t at = static_cast<ptrdiff_t>(i);
    Store(dst + i, Residuals<K>(LoadPartial(cur, at, n), LoadPartial(cur, at - back, n), LoadPartial(above, at, n)));
    sums.Bytes(dst + i, n - i);
  }
}
#endif

// Each candidate filter's estimated cost (the sum of its residuals' kCostLow/kCostHigh bits) for row
// `cur` (n bytes) against `above`, into cost[], in one pass that also writes Paeth's residuals, the
// commonest choice on photos, to dst (up to 32 bytes past n may be written) and feeds them to `sums`
// (from zero). Where Up or Sub wins, WriteResiduals writes its residuals over them: only the winner's
// are stored, and the row is not read again for its adler32. Returns whether the row and the row above
// are all zeros (then every candidate's residuals are those zeros).
bool FilterRow(const uint8_t* cur, const uint8_t* above, size_t n, int bpp, uint8_t* dst, Adler32& sums,
               uint64_t cost[kCandidates]) {
#if defined(__AVX2__)
  return FilterRowAvx2(cur, above, n, bpp, dst, sums, cost);
#else
  uint64_t up_cost = 0, sub_cost = 0, paeth_cost = 0;
  bool zeros = true;
  const size_t back = static_cast<size_t>(bpp);
  for (size_t i = 0; i < n; i++) {
    const uint8_t x = cur[i], b = above[i];
    const uint8_t a = i >= back ? cur[i - back] : 0, c = i >= back ? above[i - back] : 0;
    zeros = zeros && (x | a | b | c) == 0;
    dst[i] = static_cast<uint8_t>(x - PaethPredictor(a, b, c));
    up_cost += ResidualCost(static_cast<uint8_t>(x - b));
    sub_cost += ResidualCost(static_cast<uint8_t>(x - a));
    paeth_cost += ResidualCost(dst[i]);
  }
  sums.Bytes(dst, n);
  cost[0] = up_cost;
  cost[1] = sub_cost;
  cost[2] = paeth_cost;
  return zeros;
#endif
}

// Up's (k = 0) or Sub's (k = 1) residuals of row `cur` (n bytes) into dst and `sums`; up to 32 bytes
// past dst + n may be written.
void WriteResiduals(const uint8_t* cur, const uint8_t* above, size_t n, int bpp, int k, uint8_t* dst, Adler32& sums) {
#if defined(__AVX2__)
  if (k == 0)
    WriteResidualsOf<0>(cur, above, n, bpp, dst, sums);
  else
    WriteResidualsOf<1>(cur, above, n, bpp, dst, sums);
#else
  const size_t back = static_cast<size_t>(bpp);
  for (size_t i = 0; i < n; i++)
    dst[i] = static_cast<uint8_t>(cur[i] - (k == 0 ? above[i] : i >= back ? cur[i - back] : 0));
  sums.Bytes(dst, n);
#endif
}

// ---------------------------------------------------------------------------------------------
// Deflate's alphabets (RFC 1951, 3.2.5)

constexpr int kEndOfBlock = 256;
constexpr int kLitLenSymbols = 286;
constexpr int kMinMatch = 3, kMaxMatch = 258;
// Runs shorter than this stay literals: a match costs a length code and a distance bit, about what a
// few literals of the residuals' commonest values cost. 6 gave the smallest 12 MP cut-out (4: +0.30%,
// 8: +0.20%; over the dev set 8 is 0.03% smaller), and fewer short runs are faster to write.
constexpr uint32_t kMinRun = 6;
// One literal in this many is counted for the Huffman code (5: prime to every pixel size, so the
// channels of a stretch of literals are sampled alike): 0.07% larger files than counting all at
// 12 MP, 0.06% over the dev set, for ~2.4 ms less per 12 MP (27.1 against 29.5 ms, best of 3×11).
constexpr size_t kLiteralSample = 5;
// Longest lit/len code: 12 rather than deflate's 15, so that four literals fit one 64-bit write.
// Against 15 this costs 0.13% at 12 MP and 0.6% over the dev cut-outs (11 bits: 0.5%, 1.3%).
constexpr int kMaxLiteralBits = 12;

struct LengthCode {
  uint16_t symbol;
  uint8_t extra_bits;
  uint8_t extra;
};

struct LengthTable {
  std::array<LengthCode, kMaxMatch + 1> by_length{};
  LengthTable() {
    static constexpr uint16_t kBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr uint8_t kExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    for (int code = 0; code < 28; code++) {
      for (int len = kBase[code]; len < kBase[code] + (1 << kExtra[code]) && len < kMaxMatch; len++) {
        by_length[len] = {static_cast<uint16_t>(257 + code), kExtra[code], static_cast<uint8_t>(len - kBase[code])};
      }
    }
    by_length[kMaxMatch] = {285, 0, 0};
  }
};
const LengthTable kLengths;

// A run of n ≥ 3 repeats as matches: `full` of length 258, then `a` and `b` (0: none). A remainder of
// 1 or 2 after the 258s is folded into the last two matches, so no match is shorter than 3.
struct RunSplit {
  size_t full;
  uint32_t a, b;
};
inline RunSplit SplitRun(size_t n) {
  const size_t q = n / kMaxMatch;
  const uint32_t r = static_cast<uint32_t>(n % kMaxMatch);
  if (r == 0) return {q, 0, 0};
  if (r >= kMinMatch) return {q, r, 0};
  return {q - 1, kMaxMatch + r - kMinMatch, kMinMatch};
}

// ---------------------------------------------------------------------------------------------
// Runs and symbol counts

class Tokenizer {
 public:
  // `segments` has room for MaxSegments(the strip's bytes).
  Tokenizer(const uint8_t* data, FastSegment* segments) : f_(data), segments_(segments) {
    for (auto& counts : literal_counts_) counts.fill(0);
  }

  // Positions [begin, end) of the strip buffer, in order, begin ≥ 1 (position 0 is a literal).
  void Scan(size_t begin, size_t end) {
    for (size_t p = begin; p < end; p += 64) {
      const size_t valid = std::min<size_t>(64, end - p);
      const uint64_t full = valid == 64 ? ~uint64_t{0} : (uint64_t{1} << valid) - 1;
      uint64_t m = RepeatMask(p) & full;
      if (open_ != kNone) {
        if (m == full) continue;
        const int t = __builtin_ctzll(~m);
        Run(open_, p + t - open_);
        open_ = kNone;
        m &= ~uint64_t{0} << t;
      }
      // The run reaching the end of the block may go on in the next: it stays open.
      size_t top = kNone;
      if ((m >> (valid - 1)) & 1) {
        const uint64_t high = ~(m << (64 - valid));
        const int ones = high == 0 ? 64 : __builtin_clzll(high);
        top = valid - ones;
        m &= top == 0 ? 0 : (uint64_t{1} << top) - 1;
      }
      // The other runs lie inside the block: only those of kMinRun or more count.
      uint64_t starts = m;
      for (uint32_t k = 1; k < kMinRun; k++) starts &= m >> k;
      while (starts != 0) {
        const int s = __builtin_ctzll(starts);
        const int ones = __builtin_ctzll(~(m >> s));
        Run(p + s, ones);
        starts &= ~uint64_t{0} << (s + ones);
      }
      if (top != kNone) open_ = p + top;
    }
  }

  // Ends the strip at `end`; fills the lit/len counts: the literals' estimated from the sample, the
  // lengths' and the end-of-block's exact.
  void Finish(size_t end, uint32_t* counts) {
    if (open_ != kNone) Run(open_, end - open_);
    open_ = kNone;
    CountLiterals(literal_start_, end);
    segments_[count_++] = {static_cast<uint32_t>(end - literal_start_), 0};
    // Every byte value gets a code: one the sample missed may still be there.
    for (int s = 0; s < 256; s++) {
      const uint32_t sampled =
          literal_counts_[0][s] + literal_counts_[1][s] + literal_counts_[2][s] + literal_counts_[3][s];
      counts[s] = sampled * kLiteralSample + 1;
    }
    for (int s = 256; s < kLitLenSymbols; s++) counts[s] = length_counts_[s - 256];
    counts[kEndOfBlock] = 1;
  }

  // A run is kMinRun bytes or more and the byte after it starts a literal range (it differs from the
  // run's byte), so each segment but the last covers at least kMinRun + 1 bytes.
  static size_t MaxSegments(size_t bytes) { return bytes / (kMinRun + 1) + 2; }

  size_t segment_count() const { return count_; }
  uint64_t matches() const { return matches_; }
  uint64_t extra_bits() const { return extra_bits_; }

 private:
  static constexpr size_t kNone = ~size_t{0};

  // Bit k: byte p + k equals the byte before it (reads 64 bytes from p - 1).
  uint64_t RepeatMask(size_t p) const {
#if defined(__AVX2__)
    const uint32_t lo = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(Load(f_ + p), Load(f_ + p - 1))));
    const uint32_t hi =
        static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(Load(f_ + p + 32), Load(f_ + p + 31))));
    return static_cast<uint64_t>(hi) << 32 | lo;
#else
    uint64_t m = 0;
    for (int k = 0; k < 64; k++) m |= static_cast<uint64_t>(f_[p + k] == f_[p + k - 1]) << k;
    return m;
#endif
  }

  // Positions [start, start + n) repeat the byte before them.
  void Run(size_t start, size_t n) {
    if (n < kMinRun) return;
    CountLiterals(literal_start_, start);
    segments_[count_++] = {static_cast<uint32_t>(start - literal_start_), static_cast<uint32_t>(n)};
    literal_start_ = start + n;
    const RunSplit split = SplitRun(n);
    CountMatch(kMaxMatch, split.full);
    if (split.a) CountMatch(split.a, 1);
    if (split.b) CountMatch(split.b, 1);
  }

  void CountMatch(uint32_t length, size_t times) {
    const LengthCode& code = kLengths.by_length[length];
    length_counts_[code.symbol - 256] += static_cast<uint32_t>(times);
    extra_bits_ += code.extra_bits * times;
    matches_ += times;
  }

  // One literal in kLiteralSample, counted across the ranges.
  void CountLiterals(size_t from, size_t to) {
    size_t k = from + sample_skip_;
    // Four tables, so that a run of one value (zeros, mostly) is not one chain of dependent increments.
    for (; k + 3 * kLiteralSample < to; k += 4 * kLiteralSample) {
      literal_counts_[0][f_[k]]++;
      literal_counts_[1][f_[k + kLiteralSample]]++;
      literal_counts_[2][f_[k + 2 * kLiteralSample]]++;
      literal_counts_[3][f_[k + 3 * kLiteralSample]]++;
    }
    for (; k < to; k += kLiteralSample) literal_counts_[0][f_[k]]++;
    sample_skip_ = k - to;
  }

  const uint8_t* f_;
  FastSegment* segments_;
  size_t count_ = 0;
  size_t literal_start_ = 0;
  size_t open_ = kNone;     // start of a run that reached the end of the last Scan
  size_t sample_skip_ = 0;  // literals to pass before the next one counted
  std::array<std::array<uint32_t, 256>, 4> literal_counts_;
  std::array<uint32_t, kLitLenSymbols - 256> length_counts_{};
  uint64_t matches_ = 0, extra_bits_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Huffman codes

// Code lengths of at most `limit` bits minimising Σ count·length (package-merge): symbols with a zero
// count get length 0; a lone symbol gets 1. Needs 2^limit ≥ the number of symbols used.
void LimitedCodeLengths(const uint32_t* counts, int n, int limit, uint8_t* lengths) {
  constexpr int kMaxSymbols = kLitLenSymbols, kMaxLimit = 15;
  std::fill(lengths, lengths + n, 0);
  // Leaves sorted by count, then symbol: count << 9 | symbol.
  uint64_t leaves[kMaxSymbols];
  size_t m = 0;
  for (int s = 0; s < n; s++) {
    if (counts[s] != 0) leaves[m++] = static_cast<uint64_t>(counts[s]) << 9 | static_cast<unsigned>(s);
  }
  if (m == 0) return;
  if (m == 1) {
    lengths[leaves[0] & 511] = 1;
    return;
  }
  std::sort(leaves, leaves + m);
  // Level 0 is the leaves alone; level l merges the leaves with the pairs of level l - 1's list
  // (a leaf first on equal weights). Only the first 2m - 2 items of a list can ever be chosen.
  const size_t cap = 2 * m - 2;
  uint8_t is_leaf[kMaxLimit][2 * kMaxSymbols];
  size_t size[kMaxLimit];
  uint64_t weights[2][2 * kMaxSymbols];
  uint64_t* prev = weights[0];
  uint64_t* next = weights[1];
  size[0] = std::min(m, cap);
  for (size_t j = 0; j < size[0]; j++) {
    prev[j] = leaves[j] >> 9;
    is_leaf[0][j] = 1;
  }
  constexpr uint64_t kNever = ~uint64_t{0};
  for (int level = 1; level < limit; level++) {
    const size_t packages = size[level - 1] / 2;
    const size_t total = std::min(cap, m + packages);
    size_t j = 0, k = 0;
    for (size_t out = 0; out < total; out++) {  // branch-free: which side wins is a coin toss
      const uint64_t leaf_weight = j < m ? leaves[j] >> 9 : kNever;
      const uint64_t package = k < packages ? prev[2 * k] + prev[2 * k + 1] : kNever;
      const bool leaf = leaf_weight <= package;
      next[out] = leaf ? leaf_weight : package;
      is_leaf[level][out] = leaf;
      j += leaf;
      k += !leaf;
    }
    size[level] = total;
    std::swap(prev, next);
  }
  size_t take = cap;
  for (int level = limit - 1; level >= 0 && take > 0; level--) {
    take = std::min(take, size[level]);
    size_t leaf_count = 0;
    for (size_t j = 0; j < take; j++) leaf_count += is_leaf[level][j];
    for (size_t j = 0; j < leaf_count; j++) lengths[leaves[j] & 511]++;
    take = 2 * (take - leaf_count);
  }
}

inline uint32_t ReverseBits(uint32_t code, int length) {
  uint32_t r = 0;
  for (int i = 0; i < length; i++, code >>= 1) r = (r << 1) | (code & 1);
  return r;
}

// Canonical codes (RFC 1951, 3.2.2), bit-reversed for an LSB-first stream: code | length << 16.
void CanonicalCodes(const uint8_t* lengths, int n, uint32_t* codes) {
  int count[16] = {};
  for (int s = 0; s < n; s++) count[lengths[s]]++;
  count[0] = 0;
  uint32_t next[16] = {};
  uint32_t code = 0;
  for (int bits = 1; bits < 16; bits++) {
    code = (code + count[bits - 1]) << 1;
    next[bits] = code;
  }
  for (int s = 0; s < n; s++) {
    const int len = lengths[s];
    codes[s] = len ? ReverseBits(next[len]++, len) | static_cast<uint32_t>(len) << 16 : 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Bits out, LSB first, 64 at a time. Put adds at most 64 - 8 bits between flushes; Flush stores 8
// bytes and advances by the whole ones, so the buffer needs 8 bytes of slack past the data.

class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out) {}
  void Put(uint64_t bits, uint64_t n) {
    acc_ |= bits << used_;
    used_ += n;
  }
  void Flush() {  // needs used_ ≤ 63
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    std::memcpy(out_, &acc_, 8);
#else
    for (int k = 0; k < 8; k++) out_[k] = static_cast<uint8_t>(acc_ >> (8 * k));
#endif
    out_ += used_ >> 3;
    acc_ >>= used_ & 56;
    used_ &= 7;
  }
  void PutNow(uint64_t bits, uint64_t n) {
    Put(bits, n);
    Flush();
  }
  // Pads to a byte boundary; returns the end of the data.
  uint8_t* Align() {
    Flush();
    if (used_ > 0) out_++;
    acc_ = 0;
    used_ = 0;
    return out_;
  }

 private:
  uint8_t* out_;
  uint64_t acc_ = 0;
  uint64_t used_ = 0;
};

constexpr uint8_t kCodeLengthOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// The code lengths of a dynamic block's two codes, run-length coded (RFC 1951, 3.2.7).
struct BlockHeader {
  struct Item {
    uint8_t symbol, extra_bits, extra;
  };
  std::vector<Item> items;
  uint32_t cl_counts[19] = {};
  uint8_t cl_lengths[19] = {};
  uint32_t cl_codes[19] = {};
  int hlit = 0, hdist = 0, hclen = 0;

  void Build(const uint8_t* lit_lengths, const uint8_t* dist_lengths, int dist_count) {
    int nlit = kLitLenSymbols;
    while (nlit > 257 && lit_lengths[nlit - 1] == 0) nlit--;
    std::vector<uint8_t> seq(lit_lengths, lit_lengths + nlit);
    seq.insert(seq.end(), dist_lengths, dist_lengths + dist_count);
    hlit = nlit - 257;
    hdist = dist_count - 1;
    for (size_t i = 0; i < seq.size();) {
      const uint8_t v = seq[i];
      size_t run = 1;
      while (i + run < seq.size() && seq[i + run] == v) run++;
      i += run;
      if (v == 0) {
        for (; run >= 11; run -= std::min<size_t>(run, 138))
          Add(18, 7, static_cast<uint8_t>(std::min<size_t>(run, 138) - 11));
        if (run >= 3) {
          Add(17, 3, static_cast<uint8_t>(run - 3));
          run = 0;
        }
      } else {
        Add(v, 0, 0);
        run--;
        for (; run >= 3; run -= std::min<size_t>(run, 6))
          Add(16, 2, static_cast<uint8_t>(std::min<size_t>(run, 6) - 3));
      }
      for (; run > 0; run--) Add(v, 0, 0);
    }
    // Two symbols at least, so the code-length code is complete (zlib refuses an incomplete one).
    int used = 0;
    for (uint32_t c : cl_counts) used += c != 0;
    if (used < 2) cl_counts[cl_counts[0] ? 1 : 0] = 1;
    LimitedCodeLengths(cl_counts, 19, 7, cl_lengths);
    CanonicalCodes(cl_lengths, 19, cl_codes);
    hclen = 19;
    while (hclen > 4 && cl_lengths[kCodeLengthOrder[hclen - 1]] == 0) hclen--;
    hclen -= 4;
  }

  uint64_t Bits() const {
    uint64_t bits = 5 + 5 + 4 + 3 * (hclen + 4);
    for (const Item& it : items) bits += cl_lengths[it.symbol] + it.extra_bits;
    return bits;
  }

  void Write(BitWriter& w) const {
    w.PutNow(hlit, 5);
    w.PutNow(hdist, 5);
    w.PutNow(hclen, 4);
    for (int k = 0; k < hclen + 4; k++) w.PutNow(cl_lengths[kCodeLengthOrder[k]], 3);
    for (const Item& it : items) {
      const uint32_t c = cl_codes[it.symbol];
      w.PutNow((c & 0xffff) | static_cast<uint32_t>(it.extra) << (c >> 16),
               static_cast<int>((c >> 16) + it.extra_bits));
    }
  }

 private:
  void Add(uint8_t symbol, uint8_t extra_bits, uint8_t extra) {
    items.push_back({symbol, extra_bits, extra});
    cl_counts[symbol]++;
  }
};

// The block's body: each segment's literals (four codes of at most kMaxLiteralBits, 48 bits, joined
// and written at once), then its run as matches at distance 1. Its own function, so that the writer
// and the tables stay in registers. A literal's code and length come from two tables: loads are
// cheaper here than unpacking one packed entry (a microbenchmark: ~5% fewer cycles per literal; not
// visible in the 12 MP total).
__attribute__((noinline)) void EmitSegments(const uint8_t* f, const FastSegment* segments, size_t count,
                                            const uint16_t* code, const uint8_t* len, const uint32_t* match_bits,
                                            const uint8_t* match_length, BitWriter& writer) {
  static_assert(4 * kMaxLiteralBits + 7 <= 63, "four literals per write");
  BitWriter w = writer;
  const uint8_t* p = f;
  for (const FastSegment* seg = segments; seg != segments + count; seg++) {
    const uint8_t* end = p + seg->literals;
    for (; end - p >= 4; p += 4) {
      const uint64_t l0 = len[p[0]], l01 = l0 + len[p[1]], l012 = l01 + len[p[2]];
      w.Put(code[p[0]] | static_cast<uint64_t>(code[p[1]]) << l0 | static_cast<uint64_t>(code[p[2]]) << l01 |
                static_cast<uint64_t>(code[p[3]]) << l012,
            l012 + len[p[3]]);
      w.Flush();
    }
    if (p < end) {  // one to three left
      const ptrdiff_t left = end - p;
      const uint64_t l0 = len[p[0]], l1 = left > 1 ? len[p[1]] : 0, l2 = left > 2 ? len[p[2]] : 0;
      const uint64_t c1 = left > 1 ? code[p[1]] : 0, c2 = left > 2 ? code[p[2]] : 0;
      w.Put(code[p[0]] | c1 << l0 | c2 << (l0 + l1), l0 + l1 + l2);
      w.Flush();
      p = end;
    }
    if (seg->run == 0) continue;
    const RunSplit split = SplitRun(seg->run);
    for (size_t k = 0; k < split.full; k++) w.PutNow(match_bits[kMaxMatch], match_length[kMaxMatch]);
    if (split.a) w.PutNow(match_bits[split.a], match_length[split.a]);
    if (split.b) w.PutNow(match_bits[split.b], match_length[split.b]);
    p += seg->run;
  }
  writer = w;
}

size_t StoredBytes(size_t raw) { return raw + 5 * ((raw + 65534) / 65535); }

uint8_t* WriteStored(const uint8_t* data, size_t raw, bool last, uint8_t* out) {
  do {
    const size_t n = std::min<size_t>(raw, 65535);
    raw -= n;
    out[0] = last && raw == 0 ? 1 : 0;  // BFINAL, BTYPE 00, padding
    out[1] = static_cast<uint8_t>(n);
    out[2] = static_cast<uint8_t>(n >> 8);
    out[3] = static_cast<uint8_t>(~n);
    out[4] = static_cast<uint8_t>(~n >> 8);
    std::memcpy(out + 5, data, n);
    out += 5 + n;
    data += n;
  } while (raw > 0);
  return out;
}

}  // namespace

// A dynamic block of `raw` bytes: at most 12 bits per literal, 18 bits per match of 3 bytes or more
// (6 per byte), a header of at most 287 code lengths × 10 bits plus 71 bits (< 520 bytes with the
// end-of-block and the flush marker).
size_t HuffmanBound(size_t raw) { return raw + raw / 2 + 520; }

size_t FastDeflateBound(size_t raw) { return std::max(StoredBytes(raw), HuffmanBound(raw)) + 8; }

size_t FastDeflateStrip(const FastStrip& s, FastScratch& scratch, uint8_t* out, uint32_t* adler) {
  const size_t stride = s.stride, row_bytes = stride + 1, raw = s.rows * row_bytes;
  // 64 bytes of slack: the run search reads whole vectors past a row's end.
  uint8_t* const f = scratch.filtered.Reserve(raw + 64);
  uint8_t* zero_row = nullptr;
  if (s.first_row == 0) {
    zero_row = scratch.zero_row.Reserve(stride);
    std::memset(zero_row, 0, stride);
  }

  Tokenizer tokens(f, scratch.segments.Reserve(Tokenizer::MaxSegments(raw)));
  Adler32 sums(1);
  for (size_t r = 0; r < s.rows; r++) {
    const size_t y = s.first_row + r;
    const uint8_t* cur = s.pixels + y * stride;
    const uint8_t* above = y == 0 ? zero_row : cur - stride;
    uint8_t* row = f + r * row_bytes;
    uint64_t cost[kCandidates];
    Adler32 row_sums(0);
    const bool zeros = FilterRow(cur, above, stride, s.bpp, row + 1, row_sums, cost);
    int best = 0;
    for (int k = 1; k < kCandidates; k++) {
      if (cost[k] < cost[best]) best = k;
    }
    row[0] = kCandidateType[best];
    // Paeth's residuals are in place (their slack lands on the next row, written after); another
    // winner is written over them, but for a row of zeros, whose residuals are zeros under any filter.
    if (kCandidateType[best] != kPaeth && !zeros) {
      row_sums = Adler32(0);
      WriteResiduals(cur, above, stride, s.bpp, best, row + 1, row_sums);
    }
    sums.Append(row[0], row_sums.Value(), stride);
    if (!s.stored) tokens.Scan(r == 0 ? 1 : r * row_bytes, (r + 1) * row_bytes);
  }
  *adler = sums.Value();
  if (s.stored) return static_cast<size_t>(WriteStored(f, raw, s.last, out) - out);

  uint32_t counts[kLitLenSymbols];
  tokens.Finish(raw, counts);
  uint8_t lit_lengths[kLitLenSymbols];
  LimitedCodeLengths(counts, kLitLenSymbols, kMaxLiteralBits, lit_lengths);
  uint32_t lit_codes[kLitLenSymbols];
  CanonicalCodes(lit_lengths, kLitLenSymbols, lit_codes);
  // Distance 1 is distance code 0: one code of one bit (RFC 1951 allows this lone incomplete code).
  const uint8_t dist_lengths[1] = {1};
  BlockHeader header;
  header.Build(lit_lengths, dist_lengths, 1);

  // Stored blocks where the estimate says the code would not pay (noise); checked again at the end.
  uint64_t bits = 3 + header.Bits() + tokens.extra_bits() + tokens.matches() * 1;
  for (int k = 0; k < kLitLenSymbols; k++) bits += static_cast<uint64_t>(counts[k]) * lit_lengths[k];
  const size_t estimate = s.last ? (bits + 7) / 8 : (bits + 3 + 7) / 8 + 4;
  if (estimate > StoredBytes(raw)) return static_cast<size_t>(WriteStored(f, raw, s.last, out) - out);

  // A match of each length: its length code, extra bits and the distance code's one 0 bit.
  uint32_t match_bits[kMaxMatch + 1];
  uint8_t match_length[kMaxMatch + 1];
  for (int len = kMinMatch; len <= kMaxMatch; len++) {
    const LengthCode& lc = kLengths.by_length[len];
    const uint32_t c = lit_codes[lc.symbol];
    const int code_len = static_cast<int>(c >> 16);
    match_bits[len] = (c & 0xffff) | static_cast<uint32_t>(lc.extra) << code_len;  // then the 0 bit of distance 1
    match_length[len] = static_cast<uint8_t>(code_len + lc.extra_bits + 1);
  }

  BitWriter w(out);
  w.PutNow(s.last ? 1 : 0, 1);
  w.PutNow(2, 2);  // BTYPE 10: dynamic Huffman codes
  header.Write(w);
  uint16_t lit_code[256];
  uint8_t lit_len[256];
  for (int k = 0; k < 256; k++) {
    lit_code[k] = static_cast<uint16_t>(lit_codes[k]);
    lit_len[k] = static_cast<uint8_t>(lit_codes[k] >> 16);
  }
  EmitSegments(f, scratch.segments.get(), tokens.segment_count(), lit_code, lit_len, match_bits, match_length, w);
  w.PutNow(lit_codes[kEndOfBlock] & 0xffff, static_cast<int>(lit_codes[kEndOfBlock] >> 16));
  uint8_t* end;
  if (s.last) {
    end = w.Align();
  } else {  // an empty stored block ends the strip on a byte boundary, as Z_SYNC_FLUSH does
    w.PutNow(0, 3);
    end = w.Align();
    const uint8_t marker[4] = {0x00, 0x00, 0xff, 0xff};
    std::memcpy(end, marker, 4);
    end += 4;
  }
  const size_t written = static_cast<size_t>(end - out);
  return written <= StoredBytes(raw) ? written : static_cast<size_t>(WriteStored(f, raw, s.last, out) - out);
}

}  // namespace cutout
