// SPDX-License-Identifier: MIT
// The fast PNG encoder (png_fast.h) outside node: every output inflated with zlib and unfiltered back
// to the pixels, a checksum (crc32) of every output so that two builds can be compared byte for byte
// (the AVX2 build and the portable scalar one must print the same lines), and the median time of
// `runs` encodes at one thread. Images: synthetic ones (noise, transparent, gradient, a cut-out-like
// disc with soft edges; widths around the 32-byte vector) and any raw files given as
// path:width:height:channels (e.g. real cut-outs dumped with sharp(...).raw()). Exit status 1 on a
// failed check.
//
//   g++ -O3 -march=x86-64-v3 -std=c++17 -Inative/src native/test/png_fast_check.cc native/src/png_encode.cc
//   native/src/png_fast.cc -lz -pthread -o /tmp/png_fast_avx2 g++ -O3 -march=x86-64    -std=c++17 -Inative/src
//   native/test/png_fast_check.cc native/src/png_encode.cc native/src/png_fast.cc -lz -pthread -o /tmp/png_fast_scalar
//   /tmp/png_fast_avx2 [runs=5] [file:w:h:c ...] > a.txt; /tmp/png_fast_scalar [runs=1] [same files] > b.txt
//   diff <(cut -d' ' -f1-2 a.txt) <(cut -d' ' -f1-2 b.txt)
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "png_encode.h"

namespace {

struct Image {
  std::string name;
  int width, height, channels;
  std::vector<uint8_t> pixels;
};

uint32_t Get32(const uint8_t* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

int Paeth(int a, int b, int c) {
  const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Chunk CRCs, then the IDATs inflated (zlib checks the adler32) and unfiltered against the pixels.
bool Decodes(const std::vector<uint8_t>& png, const Image& img) {
  std::vector<uint8_t> z;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t len = Get32(&png[at]);
    if (crc32(0, &png[at + 4], len + 4) != Get32(&png[at + 8 + len])) return false;
    if (std::memcmp(&png[at + 4], "IDAT", 4) == 0) z.insert(z.end(), &png[at + 8], &png[at + 8 + len]);
    at += 12 + len;
  }
  const size_t stride = static_cast<size_t>(img.width) * img.channels, raw = img.height * (stride + 1);
  std::vector<uint8_t> rows(raw + 1);
  uLongf got = rows.size();
  if (uncompress(rows.data(), &got, z.data(), z.size()) != Z_OK || got != raw) return false;
  std::vector<uint8_t> prev(stride, 0), cur(stride);
  const size_t c = img.channels;
  for (int y = 0; y < img.height; y++) {
    const uint8_t* f = &rows[y * (stride + 1)];
    for (size_t i = 0; i < stride; i++) {
      const int a = i >= c ? cur[i - c] : 0, b = prev[i], d = i >= c ? prev[i - c] : 0;
      const int p = f[0] == 0   ? 0
                    : f[0] == 1 ? a
                    : f[0] == 2 ? b
                    : f[0] == 3 ? (a + b) / 2
                    : f[0] == 4 ? Paeth(a, b, d)
                                : -1;
      if (p < 0) return false;
      cur[i] = static_cast<uint8_t>(f[1 + i] + p);
    }
    if (std::memcmp(cur.data(), &img.pixels[y * stride], stride) != 0) return false;
    prev.swap(cur);
  }
  return true;
}

Image Synthetic(const char* kind, int w, int h, int c) {
  Image img{std::string(kind) + " " + std::to_string(w) + "x" + std::to_string(h) + "x" + std::to_string(c), w, h, c,
            std::vector<uint8_t>(static_cast<size_t>(w) * h * c)};
  uint32_t s = 12345;
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      // A disc of noisy "subject" with a soft edge on a transparent background.
      const double r = std::hypot(x - w / 2.0, y - h / 2.0) / (std::min(w, h) / 2.5 + 1);
      const int alpha = std::clamp(static_cast<int>((1.1 - r) * 1000), 0, 255);
      for (int k = 0; k < c; k++) {
        s = s * 1103515245u + 12345u;
        uint8_t v = 0;
        if (std::strcmp(kind, "noise") == 0) v = static_cast<uint8_t>(s >> 24);
        if (std::strcmp(kind, "gradient") == 0) v = static_cast<uint8_t>(3 * x + 5 * y + 60 * k);
        if (std::strcmp(kind, "cutout") == 0) {
          const bool is_alpha = k == c - 1 && (c == 2 || c == 4);
          v = is_alpha ? alpha : alpha ? static_cast<uint8_t>(x / 3 + y / 5 + 40 * k + (s >> 29)) : 0;
        }
        img.pixels[(static_cast<size_t>(y) * w + x) * c + k] = v;
      }
    }
  }
  return img;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::vector<Image> images;
  for (const char* kind : {"noise", "transparent", "gradient", "cutout"}) {
    for (int c = 1; c <= 4; c++) {
      for (auto [w, h] : {std::pair{1, 1}, {1, 700}, {3000, 1}, {31, 17}, {33, 9}, {333, 77}, {1021, 1400}}) {
        images.push_back(Synthetic(kind, w, h, c));
      }
    }
  }
  images.push_back(Synthetic("cutout", 4620, 2598, 4));  // the size of the 12 MP bench photo
  for (int i = 2; i < argc; i++) {
    char path[4096];
    Image img{"", 0, 0, 0, {}};
    if (std::sscanf(argv[i], "%4095[^:]:%d:%d:%d", path, &img.width, &img.height, &img.channels) != 4) {
      std::fprintf(stderr, "expected file:width:height:channels, got %s\n", argv[i]);
      return 2;
    }
    std::ifstream in(path, std::ios::binary);
    img.pixels.assign(std::istreambuf_iterator<char>(in), {});
    img.name = path;
    if (img.pixels.size() != static_cast<size_t>(img.width) * img.height * img.channels) {
      std::fprintf(stderr, "%s: %zu bytes, not %dx%dx%d\n", path, img.pixels.size(), img.width, img.height,
                   img.channels);
      return 2;
    }
    images.push_back(std::move(img));
  }
  int failures = 0;
  for (const Image& img : images) {
    cutout::PngOptions options;
    options.strategy = cutout::PngStrategy::kFast;
    std::vector<double> ms;
    std::vector<uint8_t> png;
    for (int r = 0; r < runs; r++) {
      const auto t0 = std::chrono::steady_clock::now();
      const cutout::PngFile file = cutout::EncodePng(img.pixels.data(), img.width, img.height, img.channels, options);
      png.resize(file.size());
      file.WriteTo(png.data());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const bool ok = Decodes(png, img);
    failures += !ok;
    std::printf("%08x %zu %s %s %.2f ms\n", static_cast<unsigned>(crc32(0, png.data(), png.size())), png.size(),
                img.name.c_str(), ok ? "ok" : "FAILED", ms[ms.size() / 2]);
  }
  return failures ? 1 : 0;
}
