// The demo page's shadows: the addon's DrawShadow (native/src/shadow.cc, shadow_grid.cc) in the
// browser, so that switching the kind or the opacity redraws the cut-out the page already holds,
// with no second request and no credit. The same steps and constants as the C++ (in doubles, not
// floats: a level of alpha apart at most, test/native/demo-shadow.test.ts compares the two).
// Loaded as a module, so its names stay its own; it exposes
// globalThis.cutoutShadow.drawShadow(rgba, width, height, { type, opacity }), in place.
'use strict';

const SUBJECT_THRESHOLD = 128; // alpha at or above it is the subject that places the shadow
const GRID_MAX_SIDE = 384; // the reduced matte's longest side, in cells

const DROP_SIGMA = 0.012;
const DROP_DX = 0.02;
const DROP_DY = 0.03;
const GROUND_SQUASH = 0.35;
const GROUND_SHEAR = 0.5;
const GROUND_SIGMA_NEAR = 0.006;
const GROUND_SIGMA_FAR = 0.04;
const GROUND_FADE = 0.75;
const CAR_BAND = 0.25;
const CAR_DEPTH = 0.015;
const CAR_SIGMA = 0.02;
const CAR_SPREAD = 0.05;
const CAR_HALO_DEPTH = 0.045;
const CAR_HALO = 0.5;
const INVISIBLE = 0.5 / 255;

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);
const lround = (v) => Math.sign(v) * Math.round(Math.abs(v)); // C's lround: halves away from zero

/** A w×h grid of cells of f×f pixels (shadow_grid.h). */
function grid(w, h, f) {
  return {
    w,
    h,
    f,
    v: new Float64Array(w * h),
    toGrid: (pixel) => (pixel - 0.5 * (f - 1)) / f,
  };
}

function emptyGrid(w, h) {
  const f = Math.max(1, Math.ceil(Math.max(w, h) / GRID_MAX_SIDE));
  return grid(Math.ceil(w / f), Math.ceil(h / f), f);
}

function copyGrid(g) {
  const c = grid(g.w, g.h, g.f);
  c.v.set(g.v);
  return c;
}

function sample(g, x, y) {
  x = clamp(x, 0, g.w - 1);
  y = clamp(y, 0, g.h - 1);
  const x0 = Math.trunc(x);
  const y0 = Math.trunc(y);
  const x1 = Math.min(x0 + 1, g.w - 1);
  const y1 = Math.min(y0 + 1, g.h - 1);
  const fx = x - x0;
  const fy = y - y0;
  const v = g.v;
  const top = v[y0 * g.w + x0] + (v[y0 * g.w + x1] - v[y0 * g.w + x0]) * fx;
  const bottom = v[y1 * g.w + x0] + (v[y1 * g.w + x1] - v[y1 * g.w + x0]) * fx;
  return top + (bottom - top) * fy;
}

/** The pixels with any alpha, and the subject's (alpha ≥ the threshold): [x0, y0, x1, y1), or null. */
function alphaBoxes(rgba, w, h) {
  const any = [w, h, 0, 0];
  const solid = [w, h, 0, 0];
  for (let y = 0; y < h; y++) {
    for (let x = 0, i = y * w * 4 + 3; x < w; x++, i += 4) {
      const a = rgba[i];
      if (a === 0) continue;
      include(any, x, y);
      if (a >= SUBJECT_THRESHOLD) include(solid, x, y);
    }
  }
  return solid[3] > solid[1] ? { any, solid } : null;
}

function include(r, x, y) {
  if (x < r[0]) r[0] = x;
  if (y < r[1]) r[1] = y;
  if (x + 1 > r[2]) r[2] = x + 1;
  if (y + 1 > r[3]) r[3] = y + 1;
}

/** Alpha / 255 averaged over each cell, read only inside `box`. */
function downscaleAlpha(rgba, w, h, box) {
  const g = emptyGrid(w, h);
  const f = g.f;
  const [bx0, by0, bx1, by1] = box;
  for (let gy = Math.trunc(by0 / f); gy <= Math.trunc((by1 - 1) / f); gy++) {
    const ya = Math.max(gy * f, by0);
    const yb = Math.min(gy * f + f, by1, h);
    const cellH = Math.min(gy * f + f, h) - gy * f;
    for (let gx = Math.trunc(bx0 / f); gx <= Math.trunc((bx1 - 1) / f); gx++) {
      const xa = Math.max(gx * f, bx0);
      const xb = Math.min(gx * f + f, bx1);
      let sum = 0;
      for (let y = ya; y < yb; y++) for (let x = xa, i = (y * w + xa) * 4 + 3; x < xb; x++, i += 4) sum += rgba[i];
      const cellW = Math.min(gx * f + f, w) - gx * f;
      g.v[gy * g.w + gx] = sum / (255 * cellW * cellH);
    }
  }
  return g;
}

/** Three box radii whose variances add up to sigma² ("boxes for Gauss"). */
function boxRadii(sigma) {
  const ideal = Math.sqrt((12 * sigma * sigma) / 3 + 1);
  let wl = Math.floor(ideal);
  if (wl % 2 === 0) wl--;
  const wu = wl + 2;
  const m = (12 * sigma * sigma - 3 * wl * wl - 12 * wl - 9) / (-4 * wl - 4);
  const small = lround(m);
  return [0, 1, 2].map((i) => ((i < small ? wl : wu) - 1) / 2);
}

function boxLine(v, start, n, stride, r, tmp) {
  for (let i = 0; i < n; i++) tmp[i] = v[start + i * stride];
  const inv = 1 / (2 * r + 1);
  let sum = (r + 1) * tmp[0];
  for (let j = 1; j <= r; j++) sum += tmp[Math.min(j, n - 1)];
  for (let i = 0; i < n; i++) {
    v[start + i * stride] = sum * inv;
    sum += tmp[Math.min(i + r + 1, n - 1)] - tmp[Math.max(i - r, 0)];
  }
}

/** Three box passes per axis ≈ a Gaussian of `sigma` cells; edge cells repeat past the edge. */
function blurGrid(g, sigma) {
  if (!(sigma >= 0.5) || g.w === 0 || g.h === 0) return;
  const tmp = new Float64Array(Math.max(g.w, g.h));
  for (const r of boxRadii(sigma)) {
    if (r <= 0) continue;
    for (let y = 0; y < g.h; y++) boxLine(g.v, y * g.w, g.w, 1, r, tmp);
    for (let x = 0; x < g.w; x++) boxLine(g.v, x, g.h, g.w, r, tmp);
  }
}

const widthOf = (r) => r[2] - r[0];
const heightOf = (r) => r[3] - r[1];

function dropLayer(m, solid) {
  const cells = Math.hypot(widthOf(solid), heightOf(solid)) / m.f;
  blurGrid(m, DROP_SIGMA * cells);
  return { s: m, ox: DROP_DX * cells, oy: DROP_DY * cells, yMin: 0 };
}

function groundLayer(m, solid) {
  const height = heightOf(solid) / m.f;
  const yc = m.toGrid(solid[3] - 0.5);
  const top = m.toGrid(solid[1] - 0.5);
  const near = Math.max(0.5, GROUND_SIGMA_NEAR * height);
  const far = GROUND_SIGMA_FAR * height;
  const first = Math.max(0, Math.floor(yc - 3 * near) - 1);
  const p = grid(m.w, m.h, m.f);
  for (let gy = first; gy < m.h; gy++) {
    const t = Math.max(0, gy - yc) / GROUND_SQUASH;
    if (yc - t < top) break;
    for (let gx = 0; gx < m.w; gx++) p.v[gy * m.w + gx] = sample(m, gx - GROUND_SHEAR * t, yc - t);
  }
  const blurred = copyGrid(p);
  blurGrid(p, near);
  blurGrid(blurred, far);
  const length = Math.max(1, GROUND_SQUASH * height);
  for (let gy = first; gy < m.h; gy++) {
    const u = clamp((gy - yc) / length, 0, 1);
    for (let gx = 0, i = gy * m.w; gx < m.w; gx++, i++) p.v[i] = (p.v[i] + (blurred.v[i] - p.v[i]) * u) * (1 - GROUND_FADE * u);
  }
  return { s: p, ox: 0, oy: 0, yMin: solid[3] - 1 };
}

function carLayer(m, solid) {
  const width = widthOf(solid) / m.f;
  const bandTop = solid[3] - Math.max(1, lround(CAR_BAND * heightOf(solid)));
  const yc = m.toGrid(solid[3] - 0.5);
  const gy0 = clamp(Math.floor(m.toGrid(bandTop)), 0, m.h - 1);
  const gy1 = clamp(Math.ceil(yc), 0, m.h - 1);
  const coreEnd = Math.min(m.h - 1, lround(yc + CAR_DEPTH * width));
  const s = grid(m.w, m.h, m.f);
  let fx0 = m.w;
  let fx1 = -1;
  const gap = Math.max(1, yc - gy0);
  for (let gx = 0; gx < m.w; gx++) {
    let foot = 0;
    let lowest = -1;
    for (let gy = gy0; gy <= gy1; gy++) {
      const a = m.v[gy * m.w + gx];
      foot = Math.max(foot, a);
      if (a >= 0.5) lowest = gy;
    }
    if (lowest < 0) continue;
    fx0 = Math.min(fx0, gx);
    fx1 = gx;
    const lift = clamp((yc - lowest) / gap, 0, 1);
    const dark = foot * Math.sqrt(1 - lift);
    for (let gy = lowest; gy <= coreEnd; gy++) {
      const up = clamp((yc - gy) / gap, 0, 1);
      s.v[gy * m.w + gx] = dark * (1 - up) * (1 - up);
    }
  }
  if (fx1 < 0) return { s, ox: 0, oy: 0, yMin: 0 };
  blurGrid(s, CAR_SIGMA * width);
  const cx = 0.5 * (fx0 + fx1);
  const a = 0.5 * (fx1 - fx0) + CAR_SPREAD * width;
  const b = Math.max(1, CAR_HALO_DEPTH * width);
  for (let gy = gy0; gy < m.h; gy++) {
    const dy = (gy - yc) / b;
    if (dy >= 1) break;
    for (let gx = 0; gx < m.w; gx++) {
      const dx = (gx - cx) / a;
      const q = dx * dx + dy * dy;
      if (q >= 1) continue;
      const halo = CAR_HALO * (1 - q) * (1 - q);
      const i = gy * m.w + gx;
      s.v[i] += halo - s.v[i] * halo;
    }
  }
  let peak = 0;
  for (let i = gy0 * m.w; i < s.v.length; i++) peak = Math.max(peak, s.v[i]);
  if (peak > 0 && peak < 1) for (let i = gy0 * m.w; i < s.v.length; i++) s.v[i] /= peak;
  return { s, ox: 0, oy: 0, yMin: bandTop };
}

/** The cells the layer darkens, [x0, y0, x1, y1), or null. */
function darkCells(s) {
  const r = [s.w, s.h, 0, 0];
  for (let gy = 0; gy < s.h; gy++) for (let gx = 0; gx < s.w; gx++) if (s.v[gy * s.w + gx] > INVISIBLE) include(r, gx, gy);
  return r[3] > r[1] ? r : null;
}

/** Output pixels [lo, hi) that can read cells [c0, c1) through an offset of `o` cells. */
function pixelSpan(s, c0, c1, cells, o, size) {
  const half = 0.5 * (s.f - 1);
  const lo = c0 === 0 ? 0 : Math.floor((c0 - 1 + o) * s.f + half);
  const hi = c1 === cells ? size : Math.ceil((c1 + o) * s.f + half) + 1;
  return [clamp(lo, 0, size), clamp(hi, 0, size)];
}

const div255 = (v) => (v + 128 + ((v + 128) >> 8)) >> 8;

/** The subject over the layer's black shadow, straight alpha, pixel by pixel. */
function compositeLayer(rgba, w, h, l, opacity) {
  const s = l.s;
  const cells = darkCells(s);
  if (!cells) return;
  const [x0, x1] = pixelSpan(s, cells[0], cells[2], s.w, l.ox, w);
  let [y0, y1] = pixelSpan(s, cells[1], cells[3], s.h, l.oy, h);
  y0 = Math.max(y0, l.yMin);
  if (x1 <= x0 || y1 <= y0) return;
  const ix = new Int32Array(x1 - x0);
  const wx = new Float64Array(x1 - x0);
  for (let x = x0; x < x1; x++) {
    const u = clamp(s.toGrid(x) - l.ox, 0, s.w - 1);
    ix[x - x0] = Math.min(Math.trunc(u), Math.max(s.w - 2, 0));
    wx[x - x0] = u - ix[x - x0];
  }
  const row = new Float64Array(s.w + 1);
  const scale = 2.55 * opacity;
  for (let y = y0; y < y1; y++) {
    const v = clamp(s.toGrid(y) - l.oy, 0, s.h - 1);
    const r0 = Math.trunc(v);
    const r1 = Math.min(r0 + 1, s.h - 1);
    const fy = v - r0;
    for (let gx = 0; gx < s.w; gx++) row[gx] = s.v[r0 * s.w + gx] + (s.v[r1 * s.w + gx] - s.v[r0 * s.w + gx]) * fy;
    row[s.w] = row[s.w - 1];
    for (let i = 0, p = (y * w + x0) * 4; i < x1 - x0; i++, p += 4) {
      const a = rgba[p + 3];
      if (a === 255) continue;
      const d = row[ix[i]] + (row[ix[i] + 1] - row[ix[i]]) * wx[i];
      const sa = Math.trunc(Math.min(255, Math.min(1, d) * scale + 0.5));
      if (sa === 0) continue;
      if (a === 0) {
        rgba[p] = rgba[p + 1] = rgba[p + 2] = 0;
        rgba[p + 3] = sa;
        continue;
      }
      const oa = a + div255(sa * (255 - a));
      for (let c = 0; c < 3; c++) rgba[p + c] = Math.trunc((rgba[p + c] * a + (oa >> 1)) / oa);
      rgba[p + 3] = oa;
    }
  }
}

/**
 * The shadow under the subject of a w×h RGBA image (Uint8Array or Uint8ClampedArray), in place.
 * `type` is 'drop', '3D' or 'car'; `opacity` 0..100 is the darkest shadow alpha in percent.
 */
function drawShadow(rgba, w, h, { type, opacity }) {
  if (!(opacity > 0) || w <= 0 || h <= 0) return;
  const boxes = alphaBoxes(rgba, w, h);
  if (!boxes) return;
  const matte = downscaleAlpha(rgba, w, h, boxes.any);
  const layer =
    type === 'drop' ? dropLayer(matte, boxes.solid) : type === '3D' ? groundLayer(matte, boxes.solid) : type === 'car' ? carLayer(matte, boxes.solid) : null;
  if (!layer) throw new TypeError(`Expected 'drop', '3D' or 'car' for type but received ${String(type)}`);
  compositeLayer(rgba, w, h, layer, Math.min(Math.round(opacity), 100));
}

globalThis.cutoutShadow = { drawShadow };
