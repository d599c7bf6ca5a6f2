// Colour-fringe ("halo") measures for cut-outs — OUR OWN metrics, not from the literature.
// Each variant's straight-alpha RGBA cut-out is composited over pure green and compared, in the
// trimap unknown region, with a reference composite built from the ground-truth alpha α*:
//
//  * input-colour reference   C_ref = α*·I + (1 − α*)·G
//      (I = input photo). Uses the observed colour as foreground colour, so it still contains the
//      original backdrop's spill in mixed pixels; it penalises ANY colour change, including a
//      correct decontamination. Useful as a consistency check only.
//  * backdrop-corrected reference   C_ref = I + (1 − α*)·(G − B̂)
//      i.e. the compositing equation I = α*F + (1 − α*)B solved with the known α* and a local
//      backdrop estimate B̂ (normalised box filter of the definite-background pixels of the trimap,
//      widening until every pixel has support). This is what a perfect cut-out with the true
//      foreground colour F would look like over green, up to the error of B̂.
//
// Errors are mean |ΔR|+|ΔG|+|ΔB| / 3 over the region, in 8-bit units (0..255).

import type { Matte, Region } from './matte.js';

export type Rgb = readonly [number, number, number];
export const GREEN: Rgb = [0, 255, 0];

/** Straight-alpha RGBA (8-bit, 4 channels) over an opaque colour → float RGB (0..255). */
export function compositeOver(rgba: Uint8Array, n: number, colour: Rgb = GREEN): Float32Array {
  if (rgba.length < 4 * n) throw new RangeError('rgba buffer too small');
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    const a = (rgba[4 * i + 3] as number) / 255;
    for (let c = 0; c < 3; c++) out[3 * i + c] = a * (rgba[4 * i + c] as number) + (1 - a) * colour[c]!;
  }
  return out;
}

/** Reference composite using the input colour as foreground: α*·I + (1 − α*)·G. */
export function inputColourReference(input: Uint8Array, channels: number, gtAlpha: Matte, colour: Rgb = GREEN): Float32Array {
  const n = gtAlpha.width * gtAlpha.height;
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    const a = gtAlpha.data[i] as number;
    for (let c = 0; c < 3; c++) out[3 * i + c] = a * (input[channels * i + c] as number) + (1 - a) * colour[c]!;
  }
  return out;
}

/**
 * Local backdrop colour: for each pixel, the mean input colour of `known` pixels in the smallest
 * square window (radius 4, 8, 16, … px) that contains at least one. Returns float RGB (0..255).
 */
export function estimateBackdrop(input: Uint8Array, channels: number, width: number, height: number, known: Uint8Array): Float32Array {
  const n = width * height;
  const W = width + 1;
  // Integral images of known-count and known-colour sums.
  const cnt = new Float64Array(W * (height + 1));
  const sums = [0, 1, 2].map(() => new Float64Array(W * (height + 1)));
  for (let y = 0; y < height; y++) {
    const rowC = [0, 0, 0];
    let rowK = 0;
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      if (known[i] !== 0) {
        rowK++;
        for (let c = 0; c < 3; c++) rowC[c]! += input[channels * i + c] as number;
      }
      const j = (y + 1) * W + (x + 1);
      cnt[j] = (cnt[j - W] as number) + rowK;
      for (let c = 0; c < 3; c++) sums[c]![j] = (sums[c]![j - W] as number) + rowC[c]!;
    }
  }
  const box = (arr: Float64Array, x0: number, y0: number, x1: number, y1: number): number =>
    (arr[y1 * W + x1] as number) - (arr[y0 * W + x1] as number) - (arr[y1 * W + x0] as number) + (arr[y0 * W + x0] as number);
  const out = new Float32Array(3 * n);
  const maxR = Math.max(width, height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      for (let r = 4; ; r *= 2) {
        const x0 = Math.max(0, x - r);
        const y0 = Math.max(0, y - r);
        const x1 = Math.min(width, x + r + 1);
        const y1 = Math.min(height, y + r + 1);
        const k = box(cnt, x0, y0, x1, y1);
        if (k > 0) {
          for (let c = 0; c < 3; c++) out[3 * i + c] = box(sums[c]!, x0, y0, x1, y1) / k;
          break;
        }
        if (r > maxR) {
          for (let c = 0; c < 3; c++) out[3 * i + c] = input[channels * i + c] as number; // no known bg at all
          break;
        }
      }
    }
  }
  return out;
}

/** Reference composite I + (1 − α*)·(G − B̂), clamped to 0..255. */
export function backdropCorrectedReference(input: Uint8Array, channels: number, gtAlpha: Matte, backdrop: Float32Array, colour: Rgb = GREEN): Float32Array {
  const n = gtAlpha.width * gtAlpha.height;
  const out = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    const b = 1 - (gtAlpha.data[i] as number);
    for (let c = 0; c < 3; c++) {
      const v = (input[channels * i + c] as number) + b * (colour[c]! - (backdrop[3 * i + c] as number));
      out[3 * i + c] = v < 0 ? 0 : Math.min(v, 255);
    }
  }
  return out;
}

/** Mean absolute RGB difference (per channel, 0..255) of two float RGB images over the region. */
export function meanRgbError(a: Float32Array, b: Float32Array, region?: Region): number {
  if (a.length !== b.length) throw new RangeError('size mismatch');
  const n = a.length / 3;
  let s = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (region !== undefined && region[i] === 0) continue;
    count++;
    for (let c = 0; c < 3; c++) s += Math.abs((a[3 * i + c] as number) - (b[3 * i + c] as number));
  }
  return count === 0 ? Number.NaN : s / (3 * count);
}
