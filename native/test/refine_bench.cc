// SPDX-License-Identifier: MIT
// Timing of CompositeAlpha stage by stage (upsampling, guided refinement, colour-model matting, ROI,
// foreground colour, box) at 1 and at N threads, side by side, on a synthetic 12 MP photo with a
// 1024×1024 model-like matte (soft blob, noisy boundary, a wide "hair" zone) or on a real photo and
// its network matte dumped as raw files; plus edge-case smoke tests (1-px images, 1×1 mattes, all-0 /
// all-1 mattes, NaN, matte larger than the image) and checks that every thread count gives the same
// bytes. Exit status != 0 on a failed check.
//
//   g++ -O3 -march=x86-64-v3 -std=c++17 -Inative/src native/test/refine_bench.cc native/src/refine.cc
//       native/src/matting.cc native/src/grid.cc native/src/foreground.cc native/src/composite.cc native/src/scratch.cc
//       -o /tmp/refine_bench
//   /tmp/refine_bench [runs=7] [w=4000] [h=3000] [threads=2] [photo.rgba mask.f32]
//
// photo.rgba: the decoded photo, w×h×4 bytes (sharp(file).rotate().ensureAlpha().raw()); mask.f32: the
// network's 1024×1024 float matte for it (session.infer's output tensor), both written as raw files.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <vector>

#include "composite.h"
#include "foreground.h"
#include "matting.h"
#include "refine.h"
#include "scratch.h"

namespace {

int g_failures = 0;
#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "CHECK failed %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                                \
    }                                                                              \
  } while (0)

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

uint32_t Hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  x ^= x >> 16;
  return x;
}

// Photo: smooth colour fields, a differently coloured "subject" inside the same blob as the matte
// (shifted by a few pixels, as a model would be), fine texture and noise.
void MakePhoto(std::vector<uint8_t>& rgba, int w, int h) {
  rgba.assign(static_cast<size_t>(w) * h * 4, 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
      const float dx = u - 0.5f, dy = v - 0.52f, th = std::atan2(dy, dx), d = std::sqrt(dx * dx + dy * dy);
      const float rad = 0.33f + 0.02f * std::sin(7 * th) + 0.01f * std::sin(23 * th + 1);
      const float inside = d < rad ? 1.f : 0.f;
      const float n = (Hash(static_cast<uint32_t>(y) * 7919u + x) & 255) / 255.f - 0.5f;
      const float tex = 0.08f * std::sin(x * 0.21f) * std::sin(y * 0.17f);
      float r = inside ? 0.75f + tex : 0.2f + 0.5f * u;
      float g = inside ? 0.55f + tex : 0.6f - 0.3f * v;
      float b = inside ? 0.35f : 0.3f + 0.4f * u * v;
      uint8_t* p = &rgba[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = static_cast<uint8_t>(std::min(std::max(r + 0.04f * n, 0.f), 1.f) * 255);
      p[1] = static_cast<uint8_t>(std::min(std::max(g + 0.04f * n, 0.f), 1.f) * 255);
      p[2] = static_cast<uint8_t>(std::min(std::max(b + 0.04f * n, 0.f), 1.f) * 255);
    }
}

// Model-like matte: sigmoid edge ~1.5 low-res px wide, ~6 px in the top "hair" sector.
std::vector<float> MakeMatte(int lw, int lh) {
  std::vector<float> m(static_cast<size_t>(lw) * lh);
  for (int y = 0; y < lh; ++y)
    for (int x = 0; x < lw; ++x) {
      const float u = (x + 0.5f) / lw, v = (y + 0.5f) / lh;
      const float dx = u - 0.5f, dy = v - 0.52f, th = std::atan2(dy, dx), d = std::sqrt(dx * dx + dy * dy);
      const float rad = 0.33f + 0.02f * std::sin(7 * th) + 0.01f * std::sin(23 * th + 1) +
                        0.003f * ((Hash(static_cast<uint32_t>((th + 4) * 400)) & 255) / 255.f - 0.5f);
      const float soft = (dy < -0.2f ? 6.f : 1.5f) / lw;
      m[static_cast<size_t>(y) * lw + x] = 1.f / (1.f + std::exp((d - rad) / soft));
    }
  return m;
}

// The whole pipeline on the stage functions with an explicit thread count (CompositeAlpha itself keeps
// small images on one thread, which would hide the splits).
std::vector<uint8_t> Pipeline(const std::vector<uint8_t>& photo, int w, int h, const std::vector<float>& low, int lw,
                              int lh, int threads, cutout::Box& box) {
  std::vector<uint8_t> img = photo;
  cutout::UpsampleMatteBilinear(low.data(), lw, lh, img.data() + 3, w, h, 4, static_cast<size_t>(w) * 4, threads);
  cutout::RefineMatteGuided(img.data(), w, h, low.data(), lw, lh, cutout::RefineParams(), threads);
  cutout::MatteByColourModel(img.data(), w, h, lw, lh, cutout::MattingParams(), threads);
  cutout::EstimateForeground(img.data(), w, h, cutout::ForegroundParams(), threads);
  box = cutout::ForegroundBox(img.data(), w, h, threads);
  return img;
}

// Same bytes and box for 1, 2, 3 and 8 threads.
void CheckThreadsAgree(const std::vector<uint8_t>& photo, int w, int h, const std::vector<float>& low, int lw, int lh) {
  cutout::Box b1;
  const std::vector<uint8_t> one = Pipeline(photo, w, h, low, lw, lh, 1, b1);
  for (int t : {2, 3, 8}) {
    cutout::Box bt;
    CHECK(Pipeline(photo, w, h, low, lw, lh, t, bt) == one);
    CHECK(bt.top == b1.top && bt.left == b1.left && bt.width == b1.width && bt.height == b1.height);
  }
}

void EdgeCases() {
  cutout::RefineParams rp;
  cutout::ForegroundParams fp;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int sizes[][4] = {{1, 1, 1, 1}, {1, 7, 1, 1},   {7, 1, 1, 1},     {1, 1, 1024, 1024},   {5, 3, 1024, 1024},
                          {3, 5, 2, 9}, {64, 48, 1, 1}, {64, 48, 64, 48}, {640, 2, 1024, 1024}, {2, 640, 3, 3}};
  for (auto& s : sizes) {
    const int w = s[0], h = s[1], lw = s[2], lh = s[3];
    for (int kind = 0; kind < 5; ++kind) {
      std::vector<float> low(static_cast<size_t>(lw) * lh);
      for (size_t k = 0; k < low.size(); ++k)
        low[k] = kind == 0   ? 0.f
                 : kind == 1 ? 1.f
                 : kind == 2 ? (Hash(k) & 255) / 255.f
                 : kind == 3 ? nan
                             : (k & 1 ? 2.f : -1.f);
      std::vector<uint8_t> img(static_cast<size_t>(w) * h * 4);
      for (size_t k = 0; k < img.size(); ++k) img[k] = static_cast<uint8_t>(Hash(static_cast<uint32_t>(k) + 99));
      const std::vector<uint8_t> photo = img;
      cutout::UpsampleMatteBilinear(low.data(), lw, lh, img.data() + 3, w, h, 4, static_cast<size_t>(w) * 4);
      if (kind == 0 || kind == 3)
        for (size_t k = 3; k < img.size(); k += 4) CHECK(img[k] == 0);
      if (kind == 1)
        for (size_t k = 3; k < img.size(); k += 4) CHECK(img[k] == 255);
      std::vector<uint8_t> before = img;
      cutout::RefineMatteGuided(img.data(), w, h, low.data(), lw, lh, rp);
      for (size_t k = 0; k < img.size(); ++k)
        if (k % 4 != 3) CHECK(img[k] == before[k]);  // RGB read-only
      if (kind == 0 || kind == 1 || kind == 3)
        for (size_t k = 3; k < img.size(); k += 4) CHECK(img[k] == before[k]);  // nothing uncertain
      before = img;
      cutout::MatteByColourModel(img.data(), w, h, lw, lh, cutout::MattingParams());
      for (size_t k = 0; k < img.size(); ++k) {
        if (k % 4 != 3)
          CHECK(img[k] == before[k]);  // RGB read-only
        else
          CHECK((img[k] >= 128) == (before[k] >= 128));  // never across 0.5
      }
      before = img;
      cutout::EstimateForeground(img.data(), w, h, fp);
      for (size_t k = 0; k < img.size(); k += 4) {
        CHECK(img[k + 3] == before[k + 3]);
        if (img[k + 3] == 0) CHECK(img[k] == 0 && img[k + 1] == 0 && img[k + 2] == 0);
        if (img[k + 3] == 255) CHECK(img[k] == before[k] && img[k + 1] == before[k + 1] && img[k + 2] == before[k + 2]);
      }
      CheckThreadsAgree(photo, w, h, low, lw, lh);
      // Plain mask (step 1) output.
      std::vector<uint8_t> mask(static_cast<size_t>(w) * h);
      cutout::UpsampleMatteBilinear(low.data(), lw, lh, mask.data(), w, h, 1, static_cast<size_t>(w));
    }
  }
  // Null / empty arguments are no-ops.
  cutout::UpsampleMatteBilinear(nullptr, 1, 1, nullptr, 1, 1, 1, 1);
  cutout::RefineMatteGuided(nullptr, 0, 0, nullptr, 0, 0, rp);
  cutout::MatteByColourModel(nullptr, 0, 0, 0, 0, cutout::MattingParams());
  cutout::EstimateForeground(nullptr, 0, 0, fp);
  // Scratch estimates at huge sizes must not overflow.
  CHECK(cutout::RefineScratchBytes(100000, 100000, 1024, 1024) > 0);
  CHECK(cutout::ForegroundScratchBytes(100000, 100000) < (size_t(1) << 31));
  CHECK(cutout::RefineScratchBytes(0, 5, 1, 1) == 0);
}

// Identity: a matte that is a step exactly on a photo edge must stay a step after refinement.
void StepCheck() {
  const int w = 300, h = 200, lw = 100, lh = 67;
  std::vector<uint8_t> img(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img[(static_cast<size_t>(y) * w + x) * 4];
      const bool fg = x >= 150;
      p[0] = fg ? 220 : 30;
      p[1] = fg ? 180 : 60;
      p[2] = fg ? 40 : 200;
    }
  std::vector<float> low(static_cast<size_t>(lw) * lh);
  for (int y = 0; y < lh; ++y)
    for (int x = 0; x < lw; ++x)
      low[static_cast<size_t>(y) * lw + x] = 1.f / (1.f + std::exp(-(x + 0.5f - 50.f) / 1.5f));
  cutout::UpsampleMatteBilinear(low.data(), lw, lh, img.data() + 3, w, h, 4, static_cast<size_t>(w) * 4);
  // The refined matte must put its transition on the photo's edge (a big jump between x=149 and 150)
  // and leave far pixels alone. (A smaller residual ramp of ~0.05-0.25 stays within ~8 px either side:
  // the guided filter redistributes the blurry matte per side of the edge, it does not sharpen it.)
  auto jump = [&]() { return img[(100 * w + 150) * 4 + 3] - img[(100 * w + 149) * 4 + 3]; };
  const int jump_before = jump();
  cutout::RefineMatteGuided(img.data(), w, h, low.data(), lw, lh, cutout::RefineParams());
  const int jump_after = jump();
  std::printf("step edge: alpha jump across the photo edge %d before, %d after refinement\n", jump_before, jump_after);
  CHECK(jump_after > 100 && jump_after > 4 * jump_before);
  CHECK(img[(100 * w + 10) * 4 + 3] < 5 && img[(100 * w + 290) * 4 + 3] > 250);
}

bool ReadFile(const char* path, void* dst, size_t bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes))) return false;
  return f.peek() == std::char_traits<char>::eof();  // exactly `bytes` long
}

uint64_t Fnv1a(const std::vector<uint8_t>& v) {
  uint64_t x = 1469598103934665603ull;
  for (uint8_t b : v) x = (x ^ b) * 1099511628211ull;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  const int w = argc > 2 ? std::atoi(argv[2]) : 4000, h = argc > 3 ? std::atoi(argv[3]) : 3000;
  const int threads = argc > 4 ? std::atoi(argv[4]) : 2;
  const int lw = 1024, lh = 1024;
  // SCRATCH_CACHE_MB: keep the stages' scratch blocks between runs, as the staged pool does (scratch.h).
  if (const char* mb = std::getenv("SCRATCH_CACHE_MB"))
    cutout::SetScratchCacheLimit(static_cast<size_t>(std::atoll(mb)) << 20);
  if (runs < 1 || w < 1 || h < 1 || threads < 1) {
    std::fprintf(stderr, "usage: refine_bench [runs] [w] [h] [threads] [photo.rgba mask.f32]\n");
    return 2;
  }
  EdgeCases();
  StepCheck();
  {
    // Sizes where every pass really splits: photo larger than the matte, and smaller (grid = photo).
    for (const auto& s : {std::pair<int, int>{1500, 1100}, std::pair<int, int>{900, 700}}) {
      std::vector<uint8_t> photo;
      MakePhoto(photo, s.first, s.second);
      CheckThreadsAgree(photo, s.first, s.second, MakeMatte(lw, lh), lw, lh);
    }
  }

  std::vector<uint8_t> photo;
  std::vector<float> low;
  if (argc > 6) {
    photo.resize(static_cast<size_t>(w) * h * 4);
    low.resize(static_cast<size_t>(lw) * lh);
    if (!ReadFile(argv[5], photo.data(), photo.size()) || !ReadFile(argv[6], low.data(), low.size() * sizeof(float))) {
      std::fprintf(stderr, "expected %s of %zu bytes and %s of %zu bytes\n", argv[5], photo.size(), argv[6],
                   low.size() * sizeof(float));
      return 2;
    }
  } else {
    MakePhoto(photo, w, h);
    low = MakeMatte(lw, lh);
  }
  // Runs alternate 1 thread and N threads, so both see the same machine load.
  const int counts[2] = {1, threads};
  std::vector<double> t[2][7];
  uint64_t hash[2] = {0, 0};
  cutout::Box boxes[2];
  std::vector<uint8_t> img;
  size_t partial = 0;
  for (int i = 0; i < runs; ++i)
    for (int k = 0; k < 2; ++k) {
      img = photo;
      cutout::CompositeTimings times;
      cutout::CompositeParams p;
      p.threads = counts[k];
      p.timings = &times;
      const auto t0 = std::chrono::steady_clock::now();
      const cutout::Box box = cutout::CompositeAlpha(img.data(), w, h, low.data(), lw, lh, p);
      t[k][6].push_back(Ms(t0, std::chrono::steady_clock::now()));
      const double stage[6] = {times.upsample, times.roi + times.box, times.refine, times.matting, times.foreground, 0};
      for (int s = 0; s < 5; ++s) t[k][s].push_back(stage[s]);
      const uint64_t hsh = Fnv1a(img);
      if (i == 0) {
        hash[k] = hsh;
        boxes[k] = box;
      } else {
        CHECK(hsh == hash[k]);
      }
      if (i == 0 && k == 0)
        for (size_t q = 3; q < img.size(); q += 4) partial += img[q] > 0 && img[q] < 255;
    }
  CHECK(hash[0] == hash[1]);
  CHECK(boxes[0].top == boxes[1].top && boxes[0].left == boxes[1].left && boxes[0].width == boxes[1].width &&
        boxes[0].height == boxes[1].height);

  const double mp = static_cast<double>(w) * h / 1e6;
  std::printf("%dx%d (%.1f MP), matte %dx%d, %s, CompositeAlpha (refine, matting, decontaminate), %d runs\n", w, h, mp,
              lw, lh, argc > 6 ? argv[5] : "synthetic photo", runs);
  std::printf("  median ms               1 thread  %2d threads  speed-up\n", threads);
  const char* names[7] = {"UpsampleMatteBilinear", "ROI + ForegroundBox", "RefineMatteGuided",
                          "MatteByColourModel",    "EstimateForeground",  "",
                          "CompositeAlpha (all)"};
  for (int s : {0, 2, 3, 4, 1, 6}) {
    const double a = Median(t[0][s]), b = Median(t[1][s]);
    std::printf("  %-22s %9.1f %11.1f %8.2fx\n", names[s], a, b, a / b);
  }
  std::printf("  same bytes and box at 1 and %d threads: %s; box %d,%d %dx%d\n", threads,
              hash[0] == hash[1] ? "yes" : "NO", boxes[0].left, boxes[0].top, boxes[0].width, boxes[0].height);
  std::printf("  partial-alpha pixels %.2f%%\n", 100.0 * partial / (w * double(h)));
  std::printf("  scratch at 1 / %d threads: refine %.1f / %.1f MB, matting %.1f / %.1f MB, foreground %.1f / %.1f MB\n",
              threads, cutout::RefineScratchBytes(w, h, lw, lh) / 1e6,
              cutout::RefineScratchBytes(w, h, lw, lh, cutout::RefineParams(), threads) / 1e6,
              cutout::MattingScratchBytes(w, h, lw, lh) / 1e6,
              cutout::MattingScratchBytes(w, h, lw, lh, cutout::MattingParams(), threads) / 1e6,
              cutout::ForegroundScratchBytes(w, h) / 1e6,
              cutout::ForegroundScratchBytes(w, h, cutout::ForegroundParams(), threads) / 1e6);
  if (g_failures) std::printf("%d CHECK failures\n", g_failures);
  return g_failures ? 1 : 0;
}
