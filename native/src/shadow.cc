// SPDX-License-Identifier: MIT
#include "shadow.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "alpha_extent.h"
#include "shadow_grid.h"

namespace cutout {
namespace {

// Each kind's shape, as fractions of the subject's box (its diagonal D, width W or height H), chosen
// by eye on the gallery photos (docs/shadows.md).
// drop: blur σ and offset right and down, × D.
constexpr float kDropSigma = 0.012f, kDropDx = 0.02f, kDropDy = 0.03f;
// 3D: the silhouette mirrored below its contact line, squashed to this share of its height and
// sheared this far sideways per unit of height; blur σ from near to far (× H); the far end keeps
// 1 − kGroundFade of the darkness.
constexpr float kGroundSquash = 0.35f, kGroundShear = 0.5f, kGroundSigmaNear = 0.006f, kGroundSigmaFar = 0.04f;
constexpr float kGroundFade = 0.75f;
// car: the lowest kCarBand × H of the silhouette casts the dark core, reaching kCarDepth × W below the
// contact line, blurred kCarSigma × W; a halo kCarSpread × W wider on each side, kCarHaloDepth × W
// deep, kCarHalo dark.
constexpr float kCarBand = 0.25f, kCarDepth = 0.015f, kCarSigma = 0.02f;
constexpr float kCarSpread = 0.05f, kCarHaloDepth = 0.045f, kCarHalo = 0.5f;

// What a kind draws: the shadow's darkness 0..1 on the grid, read at (grid coordinate − offset), and
// the first output row it may reach (3D and car never rise above the subject's lowest rows).
struct ShadowLayer {
  ShadowGrid s;
  float ox = 0, oy = 0;
  int y_min = 0;
};

float Width(const AlphaRect& r) { return static_cast<float>(r.x1 - r.x0); }
float Height(const AlphaRect& r) { return static_cast<float>(r.y1 - r.y0); }

ShadowLayer DropLayer(ShadowGrid m, const AlphaRect& solid) {
  const float cells = std::hypot(Width(solid), Height(solid)) / static_cast<float>(m.f);
  ShadowLayer l{std::move(m)};
  BlurGrid(l.s, kDropSigma * cells);
  l.ox = kDropDx * cells;
  l.oy = kDropDy * cells;
  return l;
}

// The silhouette above the contact line yc, mirrored below it: a row t cells below yc shows the row
// t / kGroundSquash above it, sheared sideways. Rows just above yc repeat yc's, so that the blur
// does not lighten the contact line itself (the output clips them).
ShadowLayer GroundLayer(const ShadowGrid& m, const AlphaRect& solid) {
  const float height = Height(solid) / static_cast<float>(m.f);
  const float yc = m.ToGrid(static_cast<float>(solid.y1) - 0.5f);
  const float top = m.ToGrid(static_cast<float>(solid.y0) - 0.5f);
  const float near = std::max(0.5f, kGroundSigmaNear * height), far = kGroundSigmaFar * height;
  const int first = std::max(0, static_cast<int>(std::floor(yc - 3.0f * near)) - 1);
  ShadowGrid p(m.w, m.h, m.f);
  for (int gy = first; gy < m.h; ++gy) {
    const float t = std::max(0.0f, static_cast<float>(gy) - yc) / kGroundSquash;
    if (yc - t < top) break;  // past the subject's top
    for (int gx = 0; gx < m.w; ++gx) p.at(gx, gy) = m.Sample(static_cast<float>(gx) - kGroundShear * t, yc - t);
  }
  ShadowGrid blurred = p;
  BlurGrid(p, near);
  BlurGrid(blurred, far);
  const float length = std::max(1.0f, kGroundSquash * height);
  for (int gy = first; gy < m.h; ++gy) {
    const float u = std::clamp((static_cast<float>(gy) - yc) / length, 0.0f, 1.0f);
    for (int gx = 0; gx < m.w; ++gx)
      p.at(gx, gy) = (p.at(gx, gy) + (blurred.at(gx, gy) - p.at(gx, gy)) * u) * (1.0f - kGroundFade * u);
  }
  ShadowLayer l{std::move(p)};
  l.y_min = solid.y1 - 1;
  return l;
}

// Under each column of the lowest band, from the column's lowest opaque cell down to just below
// the contact line (between a car's wheels: under its sills), darker the closer that cell is to the
// ground, blurred; screened with a soft half-ellipse wider than the band's footprint.
ShadowLayer CarLayer(const ShadowGrid& m, const AlphaRect& solid) {
  const float width = Width(solid) / static_cast<float>(m.f);
  const int band_top = solid.y1 - std::max(1, static_cast<int>(std::lround(kCarBand * Height(solid))));
  const float yc = m.ToGrid(static_cast<float>(solid.y1) - 0.5f);
  const int gy0 = std::clamp(static_cast<int>(std::floor(m.ToGrid(static_cast<float>(band_top)))), 0, m.h - 1);
  const int gy1 = std::clamp(static_cast<int>(std::ceil(yc)), 0, m.h - 1);
  const int core_end = std::min(m.h - 1, static_cast<int>(std::lround(yc + kCarDepth * width)));
  ShadowGrid s(m.w, m.h, m.f);
  int fx0 = m.w, fx1 = -1;
  for (int gx = 0; gx < m.w; ++gx) {
    float foot = 0;
    int lowest = -1;
    for (int gy = gy0; gy <= gy1; ++gy) {
      foot = std::max(foot, m.at(gx, gy));
      if (m.at(gx, gy) >= 0.5f) lowest = gy;
    }
    if (lowest < 0) continue;
    fx0 = std::min(fx0, gx), fx1 = gx;
    // Lighter the higher the column's underside sits above the contact line (a sill, a ball's flank).
    const float lift =
        std::clamp((yc - static_cast<float>(lowest)) / std::max(1.0f, yc - static_cast<float>(gy0)), 0.0f, 1.0f);
    const float dark = foot * std::sqrt(1.0f - lift);
    // Ambient occlusion: darkest at the ground, fading up into the gap under the body.
    const float gap = std::max(1.0f, yc - static_cast<float>(gy0));
    for (int gy = lowest; gy <= core_end; ++gy) {
      const float up = std::clamp((yc - static_cast<float>(gy)) / gap, 0.0f, 1.0f);
      s.at(gx, gy) = dark * (1.0f - up) * (1.0f - up);
    }
  }
  if (fx1 < 0) return ShadowLayer{std::move(s)};  // no solid cell in the band (a subject thinner than a cell)
  BlurGrid(s, kCarSigma * width);
  const float cx = 0.5f * static_cast<float>(fx0 + fx1);
  const float a = 0.5f * static_cast<float>(fx1 - fx0) + kCarSpread * width, b = std::max(1.0f, kCarHaloDepth * width);
  for (int gy = gy0; gy < m.h; ++gy) {
    const float dy = (static_cast<float>(gy) - yc) / b;
    if (dy >= 1.0f) break;
    for (int gx = 0; gx < m.w; ++gx) {
      const float dx = (static_cast<float>(gx) - cx) / a, q = dx * dx + dy * dy;
      if (q >= 1.0f) continue;
      const float halo = kCarHalo * (1.0f - q) * (1.0f - q);
      s.at(gx, gy) += halo - s.at(gx, gy) * halo;
    }
  }
  // The darkest point is the opacity asked for, however far the blur spread the core.
  float peak = 0;
  for (int gy = gy0; gy < m.h; ++gy)
    for (int gx = 0; gx < m.w; ++gx) peak = std::max(peak, s.at(gx, gy));
  if (peak > 0 && peak < 1)
    for (int gy = gy0; gy < m.h; ++gy)
      for (int gx = 0; gx < m.w; ++gx) s.at(gx, gy) /= peak;
  ShadowLayer l{std::move(s)};
  l.y_min = band_top;
  return l;
}

inline uint32_t Div255(uint32_t v) { return (v + 128 + ((v + 128) >> 8)) >> 8; }

// Darkness below which a cell draws nothing: under half a level of alpha at opacity 100.
constexpr float kInvisible = 0.5f / 255.0f;

// The cells the layer darkens, [x0, x1) × [y0, y1); empty (x1 = 0) when none.
AlphaRect DarkCells(const ShadowGrid& s) {
  AlphaRect r{s.w, s.h, 0, 0};
  for (int gy = 0; gy < s.h; ++gy)
    for (int gx = 0; gx < s.w; ++gx)
      if (s.at(gx, gy) > kInvisible)
        r.x0 = std::min(r.x0, gx), r.x1 = std::max(r.x1, gx + 1), r.y0 = std::min(r.y0, gy), r.y1 = gy + 1;
  return r;
}

// Output pixels [lo, hi) that can read the cells [c0, c1) through an offset of `o` cells (one cell of
// margin for the bilinear read; an edge cell repeats to the image's edge).
std::pair<int, int> PixelSpan(const ShadowGrid& s, int c0, int c1, int cells, float o, int size) {
  const float half = 0.5f * static_cast<float>(s.f - 1);
  const int lo = c0 == 0 ? 0 : static_cast<int>(std::floor((static_cast<float>(c0 - 1) + o) * s.f + half));
  const int hi = c1 == cells ? size : static_cast<int>(std::ceil((static_cast<float>(c1) + o) * s.f + half)) + 1;
  return {std::clamp(lo, 0, size), std::clamp(hi, 0, size)};
}

// The subject over the layer's shadow (black, alpha = darkness × opacity), pixel by pixel: a grid row
// interpolated once per output row, then read along it.
void CompositeLayer(uint8_t* rgba, int w, int h, const ShadowLayer& l, int opacity) {
  const ShadowGrid& s = l.s;
  const AlphaRect cells = DarkCells(s);
  if (cells.empty()) return;
  const auto [x0, x1] = PixelSpan(s, cells.x0, cells.x1, s.w, l.ox, w);
  auto [y0, y1] = PixelSpan(s, cells.y0, cells.y1, s.h, l.oy, h);
  y0 = std::max(y0, l.y_min);
  if (x1 <= x0 || y1 <= y0) return;
  std::vector<int> ix(static_cast<size_t>(x1 - x0));
  std::vector<float> wx(ix.size());
  for (int x = x0; x < x1; ++x) {
    const float u = std::clamp(s.ToGrid(static_cast<float>(x)) - l.ox, 0.0f, static_cast<float>(s.w - 1));
    ix[x - x0] = std::min(static_cast<int>(u), s.w - 2 < 0 ? 0 : s.w - 2);
    wx[x - x0] = u - static_cast<float>(ix[x - x0]);
  }
  std::vector<float> row(static_cast<size_t>(s.w) + 1, 0.0f);
  const float scale = 2.55f * static_cast<float>(opacity);
  for (int y = y0; y < y1; ++y) {
    const float v = std::clamp(s.ToGrid(static_cast<float>(y)) - l.oy, 0.0f, static_cast<float>(s.h - 1));
    const int r0 = static_cast<int>(v), r1 = std::min(r0 + 1, s.h - 1);
    const float fy = v - static_cast<float>(r0);
    for (int gx = 0; gx < s.w; ++gx) row[gx] = s.at(gx, r0) + (s.at(gx, r1) - s.at(gx, r0)) * fy;
    row[s.w] = row[s.w - 1];  // a one-cell-wide grid reads its only cell
    uint8_t* p = rgba + (static_cast<size_t>(y) * w + x0) * 4;
    for (int i = 0; i < x1 - x0; ++i, p += 4) {
      const uint32_t a = p[3];
      if (a == 255) continue;
      const float d = row[ix[i]] + (row[ix[i] + 1] - row[ix[i]]) * wx[i];
      const uint32_t sa = static_cast<uint32_t>(std::min(255.0f, std::min(1.0f, d) * scale + 0.5f));
      if (sa == 0) continue;
      if (a == 0) {
        p[0] = p[1] = p[2] = 0;
        p[3] = static_cast<uint8_t>(sa);
        continue;
      }
      // Straight-alpha over: out_a = a + sa(1 − a); the shadow is black, so colour = c·a / out_a.
      const uint32_t oa = a + Div255(sa * (255 - a));
      for (int c = 0; c < 3; ++c) p[c] = static_cast<uint8_t>((p[c] * a + oa / 2) / oa);
      p[3] = static_cast<uint8_t>(oa);
    }
  }
}

}  // namespace

void DrawShadow(uint8_t* rgba, int w, int h, const ShadowParams& p) {
  if (!rgba || w <= 0 || h <= 0 || p.opacity <= 0) return;
  // The scan the composite uses for its boxes (alpha_extent.h): the solid subject, and with the
  // semi-transparent box the pixels that have any alpha, the only ones the grid needs to read.
  const AlphaExtents e = ScanAlphaExtents(rgba, w, h, kShadowSubjectThreshold, 1);
  if (e.subject.empty()) return;
  AlphaRect any = e.subject;
  if (!e.partial.empty())
    any = {std::min(any.x0, e.partial.x0), std::min(any.y0, e.partial.y0), std::max(any.x1, e.partial.x1),
           std::max(any.y1, e.partial.y1)};
  ShadowGrid matte = DownscaleAlpha(rgba, w, h, any);
  ShadowLayer layer = p.kind == ShadowKind::kDrop     ? DropLayer(std::move(matte), e.subject)
                      : p.kind == ShadowKind::kGround ? GroundLayer(matte, e.subject)
                                                      : CarLayer(matte, e.subject);
  CompositeLayer(rgba, w, h, layer, std::min(p.opacity, 100));
}

}  // namespace cutout
