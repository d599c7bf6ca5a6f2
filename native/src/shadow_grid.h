// SPDX-License-Identifier: MIT
// The reduced copy of a matte that shadows are drawn on (shadow.h): one float per cell of f×f pixels,
// the long side at most kShadowGridMaxSide cells, so that a blur costs the same at 1 MP and at 50 MP.
// Box-filtered down from the RGBA image's alpha, blurred with three box passes (≈ a Gaussian), read
// back bilinearly. Pure C++, no N-API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "alpha_extent.h"

namespace cutout {

// Longest side of the grid, in cells. 384 keeps a 12 MP photo's cells at 11×11 pixels: the softest
// edge a shadow can have is about one cell, a few pixels of the output.
constexpr int kShadowGridMaxSide = 384;

struct ShadowGrid {
  int w = 0, h = 0;  // cells
  int f = 1;         // pixels per cell side
  std::vector<float> v;

  ShadowGrid() = default;
  ShadowGrid(int cw, int ch, int cf) : w(cw), h(ch), f(cf), v(static_cast<std::size_t>(cw) * ch, 0.0f) {}
  float& at(int x, int y) { return v[static_cast<std::size_t>(y) * w + x]; }
  float at(int x, int y) const { return v[static_cast<std::size_t>(y) * w + x]; }
  // Bilinear at grid coordinates (cell centres at integers), clamped to the edge cells.
  float Sample(float x, float y) const;
  // Pixel coordinate → grid coordinate (cell k's centre is pixel k·f + (f − 1)/2).
  float ToGrid(float pixel) const { return (pixel - 0.5f * static_cast<float>(f - 1)) / static_cast<float>(f); }
};

// The grid of a w×h image: f = ⌈max(w, h) / kShadowGridMaxSide⌉, all cells 0.
ShadowGrid EmptyShadowGrid(int w, int h);

// Alpha / 255 averaged over each cell (over the cell's pixels inside the image), read only inside
// `box` (the pixels with any alpha): the cells outside it stay 0.
ShadowGrid DownscaleAlpha(const uint8_t* rgba, int w, int h, const AlphaRect& box);

// Three box-blur passes per axis approximating a Gaussian of `sigma` cells; beyond the grid's edge
// the edge cells repeat (a subject cut by the frame goes on past it). Nothing below ~0.5 cell.
void BlurGrid(ShadowGrid& g, float sigma);

}  // namespace cutout
