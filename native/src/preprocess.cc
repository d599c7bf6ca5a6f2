// SPDX-License-Identifier: MIT
#include "preprocess.h"

namespace cutout {

void PreprocessToNchw(const uint8_t* src, int w, int h, int channels, const Normalisation& norm, float* dst) {
  const size_t plane = static_cast<size_t>(w) * static_cast<size_t>(h);
  float* r = dst;
  float* g = dst + plane;
  float* b = dst + 2 * plane;
  // Multiply by the reciprocal: one FMA per value and the loop vectorises.
  const float sr = 1.0f / norm.std[0], sg = 1.0f / norm.std[1], sb = 1.0f / norm.std[2];
  const float or_ = -norm.mean[0] * sr, og = -norm.mean[1] * sg, ob = -norm.mean[2] * sb;
  if (channels == 4) {
    for (size_t i = 0; i < plane; i++) {
      const uint8_t* p = src + i * 4;
      r[i] = p[0] * sr + or_;
      g[i] = p[1] * sg + og;
      b[i] = p[2] * sb + ob;
    }
  } else {
    for (size_t i = 0; i < plane; i++) {
      const uint8_t* p = src + i * 3;
      r[i] = p[0] * sr + or_;
      g[i] = p[1] * sg + og;
      b[i] = p[2] * sb + ob;
    }
  }
}

void PreprocessToNhwc(const uint8_t* src, int w, int h, int channels, const Normalisation& norm, float* dst) {
  const size_t plane = static_cast<size_t>(w) * static_cast<size_t>(h);
  const float s[3] = {1.0f / norm.std[0], 1.0f / norm.std[1], 1.0f / norm.std[2]};
  const float o[3] = {-norm.mean[0] * s[0], -norm.mean[1] * s[1], -norm.mean[2] * s[2]};
  for (size_t i = 0; i < plane; i++) {
    const uint8_t* p = src + i * channels;
    float* d = dst + i * 3;
    for (int c = 0; c < 3; c++) d[c] = p[c] * s[c] + o[c];
  }
}

}  // namespace cutout
