// SPDX-License-Identifier: MIT
// Mask → alpha channel of the output RGBA buffer, in place, plus background fills. Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "foreground.h"
#include "matting.h"
#include "refine.h"

namespace cutout {

struct Box {
  int top = 0, left = 0, width = 0, height = 0;
};

// Wall time of each stage of CompositeAlpha in ms (foreground: the colour estimate, or zeroing the
// colour under alpha 0 without decontamination; box: the one scan of the final alpha for the
// subject's box and the semi-transparent pixels', before the foreground step).
struct CompositeTimings {
  double upsample = 0, refine = 0, matting = 0, roi = 0, foreground = 0, box = 0;
};

struct CompositeParams {
  // Guided refinement of the upscaled matte; off = plain bilinear upscaling (matting is skipped too).
  bool refine = true;
  // Colour-model matting after the refinement (only with refine).
  bool matting = true;
  bool decontaminate = true;
  RefineParams refine_params{};
  MattingParams matting_params{};
  ForegroundParams foreground_params{};
  // Region of interest in output pixels [x1, x2) × [y1, y2); alpha outside is zeroed. Disabled when x2 <= x1.
  int roi_x1 = 0, roi_y1 = 0, roi_x2 = 0, roi_y2 = 0;
  // Threads for the full-resolution passes (native/src/parallel.h), the caller's included. Images
  // below kParallelMinPixels use one. The output bytes are the same for any count.
  int threads = 1;
  // Benchmarks: when set, receives the wall time of each stage.
  CompositeTimings* timings = nullptr;
  // Benchmarks (the JS `timings` option): the argument reader asks RunComposite for the stage times.
  bool want_timings = false;
};

// Smallest image (in pixels) that CompositeAlpha splits over threads. Measured on 2 cores: 2 threads
// save ~1.6x at 0.5-12 MP, ~1.2x at 256×192 and nothing at 128×96 (about 25 thread starts of
// ~30 µs each per call, against ~1 ms of work); docs/native.md, "Threads".
constexpr int64_t kParallelMinPixels = 1 << 16;

// Alpha at or above this counts as subject for the foreground box (~10%: ignores faint mask noise).
constexpr uint8_t kForegroundThreshold = 26;

// Writes the upscaled (and optionally refined, then colour-matted) matte into rgba's alpha, applies the ROI,
// estimates foreground colour (or zeroes the colour of fully transparent pixels), and returns
// the subject's bounding box (all zero when nothing is foreground).
Box CompositeAlpha(uint8_t* rgba, int w, int h, const float* mask, int mw, int mh, const CompositeParams& p);

// Straight-alpha "over" onto a solid colour, result written back into rgba (alpha combined).
void FlattenOnColor(uint8_t* rgba, size_t pixels, uint8_t r, uint8_t g, uint8_t b, uint8_t a);

// Straight-alpha "over" onto a background RGBA image of the same size, result into rgba.
void BlendOver(uint8_t* rgba, const uint8_t* bg, size_t pixels);

// Copies the alpha channel of rgba into a one-channel buffer.
void ExtractAlpha(const uint8_t* rgba, size_t pixels, uint8_t* dst);

}  // namespace cutout
