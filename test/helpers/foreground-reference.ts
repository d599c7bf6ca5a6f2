// The foreground colour estimation of native/src/foreground.cc written again in plain double-precision
// loops, for the tests to hold the addon's bytes against: the same working box and downscale, the
// same multi-level Gauss-Seidel solve (raster order, as the addon's diagonal bands and wavefront are
// built to reproduce), the same per-pixel 2×2 solve at full resolution. Only the arithmetic differs
// (float, vectorised and fused as the compiler likes, against double here).

export interface ForegroundReferenceParams {
  regularization: number;
  gradientWeight: number;
  smallIterations: number;
  bigIterations: number;
  smallSize: number;
  maxWorkingPixels: number;
}

export const FOREGROUND_DEFAULTS: ForegroundReferenceParams = {
  regularization: 1e-5,
  gradientWeight: 1,
  smallIterations: 10,
  bigIterations: 2,
  smallSize: 32,
  maxWorkingPixels: 1 << 19,
};

interface Region {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  s: number;
  ww: number;
  wh: number;
}

function makeRegion(w: number, h: number, bx0: number, by0: number, bx1: number, by1: number, maxPixels: number): Region {
  const budget = Math.max(maxPixels, 64);
  const factor = (bw: number, bh: number): number => {
    let s = Math.max(1, Math.ceil(Math.sqrt((bw * bh) / budget)));
    while (Math.ceil(bw / s) * Math.ceil(bh / s) > budget) s++;
    return s;
  };
  const margin = 4 * factor(bx1 - bx0, by1 - by0);
  const x0 = Math.max(0, bx0 - margin),
    y0 = Math.max(0, by0 - margin);
  const x1 = Math.min(w, bx1 + margin),
    y1 = Math.min(h, by1 + margin);
  const s = factor(x1 - x0, y1 - y0);
  return { x0, y0, x1, y1, s, ww: Math.ceil((x1 - x0) / s), wh: Math.ceil((y1 - y0) / s) };
}

/** The region's s×s cells averaged: r, g, b, a in 0..1 per working pixel. */
function averageRegion(rgba: Uint8Array, w: number, g: Region): Float64Array {
  const out = new Float64Array(g.ww * g.wh * 4);
  for (let j = 0; j < g.wh; j++) {
    for (let i = 0; i < g.ww; i++) {
      const xa = g.x0 + i * g.s,
        xb = Math.min(g.x1, xa + g.s),
        ya = g.y0 + j * g.s,
        yb = Math.min(g.y1, ya + g.s);
      const o = (j * g.ww + i) * 4;
      for (let y = ya; y < yb; y++) for (let x = xa; x < xb; x++) for (let c = 0; c < 4; c++) out[o + c]! += rgba[(y * w + x) * 4 + c]!;
      for (let c = 0; c < 4; c++) out[o + c]! /= 255 * (xb - xa) * (yb - ya);
    }
  }
  return out;
}

function resizeNearest(src: Float64Array, sw: number, sh: number, dw: number, dh: number, ch: number): Float64Array {
  const dst = new Float64Array(dw * dh * ch);
  for (let y = 0; y < dh; y++) {
    const sy = Math.min(Math.floor((y * sh) / dh), sh - 1);
    for (let x = 0; x < dw; x++) {
      const sx = Math.min(Math.floor((x * sw) / dw), sw - 1);
      for (let c = 0; c < ch; c++) dst[(y * dw + x) * ch + c] = src[(sy * sw + sx) * ch + c]!;
    }
  }
  return dst;
}

const clamp01 = (v: number): number => (v > 0 ? Math.min(v, 1) : 0); // NaN → 0

/**
 * argmin over F, B of |a F + (1-a) B - I|² + Σ w_n (|F - F_n|² + |B - B_n|²), per channel, with
 * W = Σ w_n and acc = Σ w_n (F_n, B_n); F and B clamped to 0..1.
 */
export function solve2x2(a0: number, W: number, I: ArrayLike<number>, accF: ArrayLike<number>, accB: ArrayLike<number>, f: number[], b: number[]): void {
  const a1 = 1 - a0;
  const a00 = a0 * a0 + W,
    a11 = a1 * a1 + W,
    a01 = a0 * a1;
  const det = W * (a0 * a0 + a1 * a1 + W); // a00·a11 − a01²
  for (let c = 0; c < 3; c++) {
    const b0 = a0 * I[c]! + accF[c]!,
      b1 = a1 * I[c]! + accB[c]!;
    f[c] = clamp01((a11 * b0 - a01 * b1) / det);
    b[c] = clamp01((a00 * b1 - a01 * b0) / det);
  }
}

/** One Gauss-Seidel sweep in raster order over a level (img: 4 per pixel, fb: F r,g,b, B r,g,b). */
function sweep(img: Float64Array, fb: Float64Array, w: number, h: number, reg: number, gw: number): void {
  const accF = [0, 0, 0],
    accB = [0, 0, 0],
    f = [0, 0, 0],
    b = [0, 0, 0];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const nb = [y * w + Math.max(0, x - 1), y * w + Math.min(w - 1, x + 1), Math.max(0, y - 1) * w + x, Math.min(h - 1, y + 1) * w + x];
      const p = y * w + x,
        a0 = img[p * 4 + 3]!;
      let W = 0;
      accF.fill(0);
      accB.fill(0);
      for (const n of nb) {
        const wk = reg + gw * Math.abs(a0 - img[n * 4 + 3]!);
        W += wk;
        for (let c = 0; c < 3; c++) {
          accF[c]! += wk * fb[n * 6 + c]!;
          accB[c]! += wk * fb[n * 6 + 3 + c]!;
        }
      }
      solve2x2(a0, W, img.subarray(p * 4, p * 4 + 3), accF, accB, f, b);
      for (let c = 0; c < 3; c++) {
        fb[p * 6 + c] = f[c]!;
        fb[p * 6 + 3 + c] = b[c]!;
      }
    }
  }
}

function levelSize(n: number, lv: number, levels: number): number {
  return Math.max(1, Math.round(n ** (levels ? lv / levels : 1)));
}

/** The multi-level solve on the working image: the finest level's F, B (6 per pixel). */
function solveMultiLevel(img: Float64Array, ww: number, wh: number, p: ForegroundReferenceParams): Float64Array {
  const levels = Math.max(ww, wh) > 1 ? Math.ceil(Math.log2(Math.max(ww, wh))) : 0;
  let prev: Float64Array = new Float64Array(6),
    pw = 1,
    ph = 1;
  const reg = Math.max(p.regularization, 1e-8),
    gw = Math.max(p.gradientWeight, 0);
  for (let lv = 0; lv <= levels; lv++) {
    const lw = levelSize(ww, lv, levels),
      lh = levelSize(wh, lv, levels);
    const li = lw === ww && lh === wh ? img : resizeNearest(img, ww, wh, lw, lh, 4);
    const fb = resizeNearest(prev, pw, ph, lw, lh, 6);
    const iters = lw <= p.smallSize && lh <= p.smallSize ? p.smallIterations : p.bigIterations;
    for (let it = 0; it < iters; it++) sweep(li, fb, lw, lh, reg, gw);
    [prev, pw, ph] = [fb, lw, lh];
  }
  return prev;
}

/** Centre-aligned linear tap at source coordinate s over n samples (grid.h's TapAt). */
function tapAt(s: number, n: number): [number, number, number] {
  const c = Math.min(Math.max(s, 0), n - 1);
  const i = Math.min(Math.trunc(c), Math.max(n - 2, 0));
  return [i, Math.min(i + 1, n - 1), n > 1 ? c - i : 0];
}

/**
 * What EstimateForeground makes of `photo` (RGBA, its RGB the original colours) under the matte
 * `alpha` (one byte per pixel): the RGBA bytes, rounded from double.
 */
export function foregroundReference(photo: Uint8Array, alpha: Uint8Array, w: number, h: number, p = FOREGROUND_DEFAULTS): Uint8Array {
  const rgba = photo.slice();
  for (let i = 0; i < alpha.length; i++) rgba[i * 4 + 3] = alpha[i]!;
  let bx0 = w,
    by0 = h,
    bx1 = 0,
    by1 = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const a = alpha[y * w + x]!;
      if (a === 0 || a === 255) continue;
      (bx0 = Math.min(bx0, x)), (bx1 = Math.max(bx1, x + 1)), (by0 = Math.min(by0, y)), (by1 = Math.max(by1, y + 1));
    }
  }
  const out = rgba.slice();
  if (by1 > by0) {
    const g = makeRegion(w, h, bx0, by0, bx1, by1, p.maxWorkingPixels);
    const fb = solveMultiLevel(averageRegion(rgba, w, g), g.ww, g.wh, p);
    const reg = Math.max(p.regularization, 1e-8),
      gwt = Math.max(p.gradientWeight, 0);
    const accF = [0, 0, 0],
      accB = [0, 0, 0],
      f = [0, 0, 0],
      b = [0, 0, 0],
      I = [0, 0, 0];
    for (let y = by0; y < by1; y++) {
      const [r0, r1, fy] = tapAt((y - g.y0 + 0.5) / g.s - 0.5, g.wh);
      for (let x = bx0; x < bx1; x++) {
        const a = alpha[y * w + x]!;
        if (a === 0 || a === 255) continue;
        const [c0, c1, fx] = tapAt((x - g.x0 + 0.5) / g.s - 0.5, g.ww);
        const at = (j: number, i: number, k: number): number => fb[(j * g.ww + i) * 6 + k]!;
        const blend = (k: number): number => {
          const l = at(r0, c0, k) + (at(r1, c0, k) - at(r0, c0, k)) * fy,
            r = at(r0, c1, k) + (at(r1, c1, k) - at(r0, c1, k)) * fy;
          return l + (r - l) * fx;
        };
        let dsum = 0;
        for (const [nx, ny] of [
          [Math.max(0, x - 1), y],
          [Math.min(w - 1, x + 1), y],
          [x, Math.max(0, y - 1)],
          [x, Math.min(h - 1, y + 1)],
        ] as const)
          dsum += Math.abs(a - alpha[ny * w + nx]!);
        const W = 4 * reg + (gwt / 255) * dsum;
        for (let c = 0; c < 3; c++) {
          accF[c] = W * blend(c);
          accB[c] = W * blend(3 + c);
          I[c] = photo[(y * w + x) * 4 + c]! / 255;
        }
        solve2x2(a / 255, W, I, accF, accB, f, b);
        for (let c = 0; c < 3; c++) out[(y * w + x) * 4 + c] = Math.floor(f[c]! * 255 + 0.5);
      }
    }
  }
  for (let i = 0; i < alpha.length; i++) if (alpha[i] === 0) out.fill(0, i * 4, i * 4 + 3);
  return out;
}
