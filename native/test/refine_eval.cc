// SPDX-License-Identifier: MIT
// Quality check for refine.cc / foreground.cc on the alphamatting items of the dev eval set.
// Inputs are raw dumps made outside the repo (see native/test/README.md): <dir>/<id>_{images,gt,trimaps}.bin,
// each "W H C\n" followed by W*H*C bytes. The data set itself is never copied into the repo.
//
// Matte check: GT alpha -> area-downscale by `factor` (default 3; optionally Gaussian-blurred to mimic a
// soft model output) -> UpsampleMatteBilinear vs RefineMatteGuided; SAD, MSE, gradient error in the
// trimap's unknown region.
// Foreground check: composite I = a*F + (1-a)*B with a = GT, B and F = two other items' photos;
// compare sum a*|F_est - F| (what shows on a new background) for F_est = I (no estimation) vs
// EstimateForeground.
//
//   g++ -O3 -march=x86-64-v3 -std=c++17 -Inative/src native/test/refine_eval.cc native/src/refine.cc
//       native/src/foreground.cc -o /tmp/refine_eval
//   /tmp/refine_eval [dir=/tmp/cutout_eval] [factor=3] [blur_sigma=0] [radius] [eps] [band_dilate]
//       [fg_max_working_pixels]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "foreground.h"
#include "refine.h"

namespace {

struct Raw {
  int w = 0, h = 0, c = 0;
  std::vector<uint8_t> px;
};

bool Load(const std::string& path, Raw& r) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  if (std::fscanf(f, "%d %d %d", &r.w, &r.h, &r.c) != 3) return false;
  std::fgetc(f);
  r.px.resize(static_cast<size_t>(r.w) * r.h * r.c);
  const bool ok = std::fread(r.px.data(), 1, r.px.size(), f) == r.px.size();
  std::fclose(f);
  return ok;
}

// Gaussian-derivative gradient magnitude (sigma 1.4, as the alphamatting.com gradient error).
std::vector<float> GradMag(const std::vector<float>& a, int w, int h) {
  const float sigma = 1.4f;
  const int R = 4;
  std::vector<float> g(2 * R + 1), dg(2 * R + 1);
  for (int i = -R; i <= R; ++i) {
    g[i + R] = std::exp(-i * i / (2 * sigma * sigma));
    dg[i + R] = -i * g[i + R] / (sigma * sigma);
  }
  // normalise the 2-D kernel dg(x)g(y) to unit L2 norm (as gaussgradient.m)
  double n2 = 0;
  for (int i = 0; i <= 2 * R; ++i)
    for (int j = 0; j <= 2 * R; ++j) n2 += double(dg[i] * g[j]) * (dg[i] * g[j]);
  const float nrm = 1.f / std::sqrt(static_cast<float>(n2));
  auto at = [&](const std::vector<float>& v, int x, int y) {
    x = std::min(std::max(x, 0), w - 1);
    y = std::min(std::max(y, 0), h - 1);
    return v[static_cast<size_t>(y) * w + x];
  };
  std::vector<float> tx(a.size()), ty(a.size()), out(a.size());
  // gx = dg(x) * g(y); gy = g(x) * dg(y)
  std::vector<float> hx(a.size()), hy(a.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float sd = 0, sg = 0;
      for (int i = -R; i <= R; ++i) {
        sd += dg[i + R] * at(a, x - i, y);
        sg += g[i + R] * at(a, x - i, y);
      }
      hx[static_cast<size_t>(y) * w + x] = sd;
      hy[static_cast<size_t>(y) * w + x] = sg;
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float gx = 0, gy = 0;
      for (int i = -R; i <= R; ++i) {
        gx += g[i + R] * at(hx, x, y - i);
        gy += dg[i + R] * at(hy, x, y - i);
      }
      out[static_cast<size_t>(y) * w + x] = std::sqrt(gx * gx + gy * gy) * nrm;
    }
  return out;
}

struct Metrics {
  double sad = 0, mse = 0, grad = 0;
};

Metrics Score(const std::vector<float>& a, const std::vector<float>& gt, const std::vector<float>& ggt, const Raw& tri,
              int w, int h) {
  Metrics m;
  const std::vector<float> ga = GradMag(a, w, h);
  size_t n = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (tri.px[k] == 0 || tri.px[k] == 255) continue;
    const double d = a[k] - gt[k];
    m.sad += std::fabs(d);
    m.mse += d * d;
    const double dg = ga[k] - ggt[k];
    m.grad += dg * dg;
    ++n;
  }
  m.sad /= 1000;
  m.mse /= std::max<size_t>(n, 1);
  m.grad /= 1000;
  return m;
}

// Area-average downscale of a float plane to lw×lh (cells of the same integer edges as refine.cc).
std::vector<float> AreaDown(const std::vector<float>& a, int w, int h, int lw, int lh) {
  std::vector<float> o(static_cast<size_t>(lw) * lh);
  for (int j = 0; j < lh; ++j)
    for (int i = 0; i < lw; ++i) {
      const int x0 = int(int64_t(i) * w / lw), x1 = int(int64_t(i + 1) * w / lw);
      const int y0 = int(int64_t(j) * h / lh), y1 = int(int64_t(j + 1) * h / lh);
      double s = 0;
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) s += a[static_cast<size_t>(y) * w + x];
      o[static_cast<size_t>(j) * lw + i] = static_cast<float>(s / ((x1 - x0) * (y1 - y0)));
    }
  return o;
}

void Blur(std::vector<float>& a, int w, int h, float sigma) {
  if (sigma <= 0) return;
  const int R = static_cast<int>(std::ceil(3 * sigma));
  std::vector<float> k(2 * R + 1);
  float s = 0;
  for (int i = -R; i <= R; ++i) s += k[i + R] = std::exp(-i * i / (2 * sigma * sigma));
  for (auto& v : k) v /= s;
  std::vector<float> t(a.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float acc = 0;
      for (int i = -R; i <= R; ++i) acc += k[i + R] * a[size_t(y) * w + std::min(std::max(x + i, 0), w - 1)];
      t[size_t(y) * w + x] = acc;
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float acc = 0;
      for (int i = -R; i <= R; ++i) acc += k[i + R] * t[size_t(std::min(std::max(y + i, 0), h - 1)) * w + x];
      a[size_t(y) * w + x] = acc;
    }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/cutout_eval";
  const double factor = argc > 2 ? std::atof(argv[2]) : 3.0;
  const float blur = argc > 3 ? static_cast<float>(std::atof(argv[3])) : 0.f;  // low-res sigma
  cutout::RefineParams rp;
  if (argc > 4) rp.radius = std::atoi(argv[4]);
  if (argc > 5) rp.eps = static_cast<float>(std::atof(argv[5]));
  if (argc > 6) rp.band_dilate = std::atoi(argv[6]);
  cutout::ForegroundParams fp;
  if (argc > 7) fp.max_working_pixels = std::atoi(argv[7]);
  std::vector<std::string> ids;
  {
    std::ifstream f(dir + "/ids.txt");
    for (std::string s; std::getline(f, s);)
      if (!s.empty()) ids.push_back(s);
  }
  std::printf("factor %.2f blur %.2f radius %d eps %g dilate %d\n", factor, blur, rp.radius, rp.eps, rp.band_dilate);
  std::printf("%-8s | %8s %8s %8s | %8s %8s %8s | %8s %8s\n", "id", "bil.SAD", "bil.MSE", "bil.Grad", "ref.SAD",
              "ref.MSE", "ref.Grad", "fg.none", "fg.est");
  Metrics tb, tr;
  double tfn = 0, tfe = 0;
  std::vector<Raw> imgs(ids.size());
  for (size_t n = 0; n < ids.size(); ++n) Load(dir + "/" + ids[n] + "_images.bin", imgs[n]);
  for (size_t n = 0; n < ids.size(); ++n) {
    Raw &im = imgs[n], gt, tri;
    if (!Load(dir + "/" + ids[n] + "_gt.bin", gt) || !Load(dir + "/" + ids[n] + "_trimaps.bin", tri) || im.c != 3) {
      std::fprintf(stderr, "cannot load %s\n", ids[n].c_str());
      return 1;
    }
    const int w = im.w, h = im.h;
    const size_t N = static_cast<size_t>(w) * h;
    std::vector<float> g(N);
    for (size_t k = 0; k < N; ++k) g[k] = gt.px[k] / 255.f;
    const std::vector<float> gg = GradMag(g, w, h);
    const int lw = std::max(1, int(std::lround(w / factor))), lh = std::max(1, int(std::lround(h / factor)));
    std::vector<float> low = AreaDown(g, w, h, lw, lh);
    Blur(low, lw, lh, blur);
    std::vector<uint8_t> rgba(N * 4);
    for (size_t k = 0; k < N; ++k) {
      rgba[4 * k] = im.px[3 * k];
      rgba[4 * k + 1] = im.px[3 * k + 1];
      rgba[4 * k + 2] = im.px[3 * k + 2];
    }
    cutout::UpsampleMatteBilinear(low.data(), lw, lh, rgba.data() + 3, w, h, 4, size_t(w) * 4);
    std::vector<float> a(N);
    for (size_t k = 0; k < N; ++k) a[k] = rgba[4 * k + 3] / 255.f;
    const Metrics mb = Score(a, g, gg, tri, w, h);
    cutout::RefineMatteGuided(rgba.data(), w, h, low.data(), lw, lh, rp);
    for (size_t k = 0; k < N; ++k) a[k] = rgba[4 * k + 3] / 255.f;
    const Metrics mr = Score(a, g, gg, tri, w, h);

    // Foreground: alpha = GT, B = next item's photo, F = the item after that (both wrapped). Not this
    // photo: its semi-transparent pixels already hold its own background, which is what we remove.
    const Raw& bg = imgs[(n + 1) % ids.size()];
    const Raw& fg = imgs[(n + 2) % ids.size()];
    std::vector<uint8_t> comp(N * 4);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t k = size_t(y) * w + x, kb = size_t(y % bg.h) * bg.w + (x % bg.w);
        const size_t kf = size_t(y % fg.h) * fg.w + (x % fg.w);
        const float al = g[k];
        for (int c = 0; c < 3; ++c)
          comp[4 * k + c] = uint8_t(al * fg.px[3 * kf + c] + (1 - al) * bg.px[3 * kb + c] + 0.5f);
        comp[4 * k + 3] = gt.px[k];
      }
    double en = 0, ee = 0;
    std::vector<uint8_t> est = comp;
    cutout::EstimateForeground(est.data(), w, h, fp);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const size_t k = size_t(y) * w + x, kf = size_t(y % fg.h) * fg.w + (x % fg.w);
        const uint8_t al = gt.px[k];
        if (al == 0 || al == 255) continue;
        for (int c = 0; c < 3; ++c) {
          en += g[k] * std::fabs(comp[4 * k + c] - double(fg.px[3 * kf + c])) / 255.0;
          ee += g[k] * std::fabs(est[4 * k + c] - double(fg.px[3 * kf + c])) / 255.0;
        }
      }
    en /= 1000;
    ee /= 1000;
    std::printf("%-8s | %8.2f %8.5f %8.2f | %8.2f %8.5f %8.2f | %8.2f %8.2f\n", ids[n].c_str(), mb.sad, mb.mse, mb.grad,
                mr.sad, mr.mse, mr.grad, en, ee);
    tb.sad += mb.sad;
    tb.mse += mb.mse;
    tb.grad += mb.grad;
    tr.sad += mr.sad;
    tr.mse += mr.mse;
    tr.grad += mr.grad;
    tfn += en;
    tfe += ee;
  }
  const double k = static_cast<double>(ids.size());
  std::printf("%-8s | %8.2f %8.5f %8.2f | %8.2f %8.5f %8.2f | %8.2f %8.2f\n", "MEAN", tb.sad / k, tb.mse / k,
              tb.grad / k, tr.sad / k, tr.mse / k, tr.grad / k, tfn / k, tfe / k);
  std::printf("refined vs bilinear: SAD %+.1f%%  MSE %+.1f%%  Grad %+.1f%%   foreground error %+.1f%%\n",
              100 * (tr.sad / tb.sad - 1), 100 * (tr.mse / tb.mse - 1), 100 * (tr.grad / tb.grad - 1),
              100 * (tfe / tfn - 1));
  return 0;
}
