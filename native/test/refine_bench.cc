// SPDX-License-Identifier: MIT
// Timing of UpsampleMatteBilinear / RefineMatteGuided / MatteByColourModel / EstimateForeground on a synthetic 12 MP photo
// with a 1024×1024 model-like matte (soft blob, noisy boundary, a wide "hair" zone), plus edge-case
// smoke tests (1-px images, 1×1 mattes, all-0 / all-1 mattes, NaN, matte larger than the image).
// Exit status != 0 on a failed check.
//
//   g++ -O3 -march=x86-64-v3 -std=c++17 -Inative/src native/test/refine_bench.cc native/src/refine.cc
//       native/src/matting.cc native/src/grid.cc native/src/foreground.cc -o /tmp/refine_bench && /tmp/refine_bench [runs] [w] [h]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include <time.h>

#include "foreground.h"
#include "matting.h"
#include "refine.h"

namespace {

int g_failures = 0;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      std::fprintf(stderr, "CHECK failed %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                   \
    }                                                                 \
  } while (0)

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Thread CPU time: the machine is shared, so wall time alone over-reports under load.
double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

void EdgeCases() {
  cutout::RefineParams rp;
  cutout::ForegroundParams fp;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int sizes[][4] = {{1, 1, 1, 1}, {1, 7, 1, 1}, {7, 1, 1, 1},   {1, 1, 1024, 1024}, {5, 3, 1024, 1024},
                          {3, 5, 2, 9}, {64, 48, 1, 1}, {64, 48, 64, 48}, {640, 2, 1024, 1024}, {2, 640, 3, 3}};
  for (auto& s : sizes) {
    const int w = s[0], h = s[1], lw = s[2], lh = s[3];
    for (int kind = 0; kind < 5; ++kind) {
      std::vector<float> low(static_cast<size_t>(lw) * lh);
      for (size_t k = 0; k < low.size(); ++k)
        low[k] = kind == 0 ? 0.f : kind == 1 ? 1.f : kind == 2 ? (Hash(k) & 255) / 255.f : kind == 3 ? nan : (k & 1 ? 2.f : -1.f);
      std::vector<uint8_t> img(static_cast<size_t>(w) * h * 4);
      for (size_t k = 0; k < img.size(); ++k) img[k] = static_cast<uint8_t>(Hash(static_cast<uint32_t>(k) + 99));
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
        if (k % 4 != 3) CHECK(img[k] == before[k]);                            // RGB read-only
        else CHECK((img[k] >= 128) == (before[k] >= 128));                    // never across 0.5
      }
      before = img;
      cutout::EstimateForeground(img.data(), w, h, fp);
      for (size_t k = 0; k < img.size(); k += 4) {
        CHECK(img[k + 3] == before[k + 3]);
        if (img[k + 3] == 0) CHECK(img[k] == 0 && img[k + 1] == 0 && img[k + 2] == 0);
        if (img[k + 3] == 255) CHECK(img[k] == before[k] && img[k + 1] == before[k + 1] && img[k + 2] == before[k + 2]);
      }
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
    for (int x = 0; x < lw; ++x) low[static_cast<size_t>(y) * lw + x] = 1.f / (1.f + std::exp(-(x + 0.5f - 50.f) / 1.5f));
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

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  const int w = argc > 2 ? std::atoi(argv[2]) : 4000, h = argc > 3 ? std::atoi(argv[3]) : 3000;
  const int lw = 1024, lh = 1024;
  EdgeCases();
  StepCheck();

  std::vector<uint8_t> photo;
  MakePhoto(photo, w, h);
  const std::vector<float> low = MakeMatte(lw, lh);
  cutout::RefineParams rp;
  cutout::ForegroundParams fp;
  std::vector<double> t_up, t_ref, t_mat, t_fg, c_up, c_ref, c_mat, c_fg;
  std::vector<uint8_t> img;
  size_t partial = 0, band_changed = 0;
  for (int i = 0; i < runs; ++i) {
    img = photo;
    double c0 = CpuMs();
    auto t0 = std::chrono::steady_clock::now();
    cutout::UpsampleMatteBilinear(low.data(), lw, lh, img.data() + 3, w, h, 4, static_cast<size_t>(w) * 4);
    auto t1 = std::chrono::steady_clock::now();
    c_up.push_back(CpuMs() - c0);
    std::vector<uint8_t> before;
    if (i == 0) before = img;
    c0 = CpuMs();
    auto t1b = std::chrono::steady_clock::now();
    cutout::RefineMatteGuided(img.data(), w, h, low.data(), lw, lh, rp);
    auto t2 = std::chrono::steady_clock::now();
    c_ref.push_back(CpuMs() - c0);
    if (i == 0) {
      for (size_t k = 3; k < img.size(); k += 4) {
        partial += img[k] > 0 && img[k] < 255;
        band_changed += img[k] != before[k];
      }
    }
    c0 = CpuMs();
    auto t2m = std::chrono::steady_clock::now();
    cutout::MatteByColourModel(img.data(), w, h, lw, lh, cutout::MattingParams());
    auto t2n = std::chrono::steady_clock::now();
    c_mat.push_back(CpuMs() - c0);
    t_mat.push_back(Ms(t2m, t2n));
    c0 = CpuMs();
    auto t2b = std::chrono::steady_clock::now();
    cutout::EstimateForeground(img.data(), w, h, fp);
    auto t3 = std::chrono::steady_clock::now();
    c_fg.push_back(CpuMs() - c0);
    t_up.push_back(Ms(t0, t1));
    t_ref.push_back(Ms(t1b, t2));
    t_fg.push_back(Ms(t2b, t3));
  }
  const double mp = static_cast<double>(w) * h / 1e6;
  auto mn = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  std::printf("%dx%d (%.1f MP), matte %dx%d, %d runs:      wall median   wall min   cpu median\n", w, h, mp, lw,
              lh, runs);
  std::printf("  UpsampleMatteBilinear %12.1f %10.1f %12.1f\n", Median(t_up), mn(t_up), Median(c_up));
  std::printf("  RefineMatteGuided     %12.1f %10.1f %12.1f\n", Median(t_ref), mn(t_ref), Median(c_ref));
  std::printf("  MatteByColourModel    %12.1f %10.1f %12.1f\n", Median(t_mat), mn(t_mat), Median(c_mat));
  std::printf("  EstimateForeground    %12.1f %10.1f %12.1f\n", Median(t_fg), mn(t_fg), Median(c_fg));
  std::printf("  refine+matting+fg     %12.1f %10.1f %12.1f\n", Median(t_ref) + Median(t_mat) + Median(t_fg),
              mn(t_ref) + mn(t_mat) + mn(t_fg), Median(c_ref) + Median(c_mat) + Median(c_fg));
  std::printf("  partial-alpha pixels %.2f%%, alpha changed by refinement %.2f%%\n", 100.0 * partial / (w * double(h)),
              100.0 * band_changed / (w * double(h)));
  std::printf("  scratch: refine %.1f MB, matting %.1f MB, foreground %.1f MB\n", cutout::RefineScratchBytes(w, h, lw, lh) / 1e6,
              cutout::MattingScratchBytes(w, h, lw, lh) / 1e6, cutout::ForegroundScratchBytes(w, h) / 1e6);
  if (g_failures) std::printf("%d CHECK failures\n", g_failures);
  return g_failures ? 1 : 0;
}
