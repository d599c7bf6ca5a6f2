// The colour-model matting of native/src/matting.cc written again in plain double-precision loops,
// for the tests to hold the addon's alpha against: the same grid, sure/uncertain classes, three
// blurred levels of sure colours, band, choice of level and projection onto the B→F line. Only the
// arithmetic differs (float, vectorised and fused as the compiler likes, against double here).

export interface MattingReferenceParams {
  sureBg: number;
  sureFg: number;
  bandDilate: number;
  sigma: number;
  minSupport: number;
  confidenceMin: number;
  confidenceRange: number;
}

export const MATTING_DEFAULTS: MattingReferenceParams = {
  sureBg: 0.05,
  sureFg: 0.8,
  bandDilate: 1,
  sigma: 2,
  minSupport: 0.05,
  confidenceMin: 0.05,
  confidenceRange: 0.15,
};

const CH = 8; // per cell: Σf·r, Σf·g, Σf·b, Σf (sure foreground), then the same for background

interface Plane {
  a: Float64Array;
  w: number;
  h: number;
}

const cellEdges = (nSrc: number, nDst: number): number[] => Array.from({ length: nDst + 1 }, (_, i) => Math.floor((i * nSrc) / nDst));

/** Mean over f×f blocks, partial blocks over the cells they have. */
function downscale(p: Plane, f: number): Plane {
  const w = Math.ceil(p.w / f),
    h = Math.ceil(p.h / f);
  const a = new Float64Array(w * h * CH);
  for (let y = 0; y < p.h; y++)
    for (let x = 0; x < p.w; x++) for (let c = 0; c < CH; c++) a[(Math.floor(y / f) * w + Math.floor(x / f)) * CH + c]! += p.a[(y * p.w + x) * CH + c]!;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const cnt = (Math.min(p.w, (x + 1) * f) - x * f) * (Math.min(p.h, (y + 1) * f) - y * f);
      for (let c = 0; c < CH; c++) a[(y * w + x) * CH + c]! /= cnt;
    }
  }
  return { a, w, h };
}

/** Three box blurs of radius r, edge cells repeated, each window divided by 2r + 1 (a Gaussian). */
function blur(p: Plane, sigma: number): void {
  const r = Math.max(1, Math.round((Math.sqrt(4 * sigma * sigma + 1) - 1) / 2));
  const pass = (n: number, lines: number, at: (line: number, k: number) => number): void => {
    const line = new Float64Array(n * CH);
    for (let l = 0; l < lines; l++) {
      for (let k = 0; k < n; k++) for (let c = 0; c < CH; c++) line[k * CH + c] = p.a[at(l, k) + c]!;
      for (let k = 0; k < n; k++) {
        for (let c = 0; c < CH; c++) {
          let s = 0;
          for (let d = -r; d <= r; d++) s += line[Math.min(n - 1, Math.max(0, k + d)) * CH + c]!;
          p.a[at(l, k) + c] = s / (2 * r + 1);
        }
      }
    }
  };
  for (let round = 0; round < 3; round++) {
    pass(p.w, p.h, (y, x) => (y * p.w + x) * CH);
    pass(p.h, p.w, (x, y) => (y * p.w + x) * CH);
  }
}

function sample(p: Plane, g: number, scale: number, i: number): number[] {
  const [x0, x1, fx] = tapAt((i + 0.5) / scale - 0.5, p.w),
    [y0, y1, fy] = tapAt((g + 0.5) / scale - 0.5, p.h);
  const v = (y: number, x: number, c: number): number => p.a[(y * p.w + x) * CH + c]!;
  return Array.from({ length: CH }, (_, c) => (v(y0, x0, c) * (1 - fx) + v(y0, x1, c) * fx) * (1 - fy) + (v(y1, x0, c) * (1 - fx) + v(y1, x1, c) * fx) * fy);
}

function tapAt(s: number, n: number): [number, number, number] {
  const c = Math.min(Math.max(s, 0), n - 1);
  const i = Math.min(Math.trunc(c), Math.max(n - 2, 0));
  return [i, Math.min(i + 1, n - 1), n > 1 ? c - i : 0];
}

/** The grid cells' mean RGBA (0..1) and the half-size plane of sure colours; null when no cell is uncertain. */
function classify(rgba: Uint8Array, w: number, cx: number[], cy: number[], p: MattingReferenceParams) {
  const gw = cx.length - 1,
    gh = cy.length - 1,
    w0 = Math.ceil(gw / 2),
    h0 = Math.ceil(gh / 2);
  const band = new Uint8Array(gw * gh);
  const L0: Plane = { a: new Float64Array(w0 * h0 * CH), w: w0, h: h0 };
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      const m = [0, 0, 0, 0];
      for (let y = cy[j]!; y < cy[j + 1]!; y++) for (let x = cx[i]!; x < cx[i + 1]!; x++) for (let c = 0; c < 4; c++) m[c]! += rgba[(y * w + x) * 4 + c]!;
      const n = 255 * (cy[j + 1]! - cy[j]!) * (cx[i + 1]! - cx[i]!);
      const a = m[3]! / n;
      if (a > p.sureBg && a < p.sureFg) {
        band[j * gw + i] = 1;
        continue;
      }
      const o = ((j >> 1) * w0 + (i >> 1)) * CH + (a >= p.sureFg ? 0 : 4);
      for (let c = 0; c < 3; c++) L0.a[o + c]! += m[c]! / n;
      L0.a[o + 3]! += 1;
    }
  }
  if (!band.includes(1)) return null;
  for (let y = 0; y < h0; y++) {
    for (let x = 0; x < w0; x++) {
      const cnt = (Math.min(gw, 2 * x + 2) - 2 * x) * (Math.min(gh, 2 * y + 2) - 2 * y);
      for (let c = 0; c < CH; c++) L0.a[(y * w0 + x) * CH + c]! /= cnt;
    }
  }
  return { band, L0 };
}

function dilate(band: Uint8Array, gw: number, gh: number, k: number): Uint8Array {
  const out = new Uint8Array(band.length);
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      let any = 0;
      for (let y = Math.max(0, j - k); y <= Math.min(gh - 1, j + k) && !any; y++)
        for (let x = Math.max(0, i - k); x <= Math.min(gw - 1, i + k); x++) any |= band[y * gw + x]!;
      out[j * gw + i] = any;
    }
  }
  return out;
}

/** A band cell's model: background colour, F − B, 1/|F − B|² and confidence; null where none. */
function cellModel(levels: Array<[Plane, number]>, j: number, i: number, p: MattingReferenceParams) {
  const s = levels.map(([L, scale]) => sample(L, j, scale, i));
  const fb: number[] = [];
  for (const b of [0, 4]) {
    const pick = s[0]![b + 3]! >= p.minSupport ? s[0] : s[1]![b + 3]! >= p.minSupport ? s[1] : s[2]![b + 3]! > 1e-6 ? s[2] : undefined;
    if (!pick) return null;
    for (let c = 0; c < 3; c++) fb[b + c] = pick[b + c]! / pick[b + 3]!;
  }
  const d = [0, 1, 2].map((c) => fb[c]! - fb[4 + c]!);
  const dd = d[0]! ** 2 + d[1]! ** 2 + d[2]! ** 2;
  const conf = Math.min(1, Math.max(0, (Math.sqrt(dd) - p.confidenceMin) / Math.max(p.confidenceRange, 1e-6)));
  if (conf <= 0) return null;
  return { bg: fb.slice(4, 7), d, inv: 1 / Math.max(dd, 1e-6), conf };
}

/**
 * What MatteByColourModel makes of `rgba` (RGBA, alpha the refined matte) for a lw×lh network matte:
 * the new alpha, one byte per pixel, rounded from double.
 */
export function mattingReference(rgba: Uint8Array, w: number, h: number, lw: number, lh: number, p = MATTING_DEFAULTS): Uint8Array {
  const alpha = Uint8Array.from({ length: w * h }, (_, i) => rgba[i * 4 + 3]!);
  const gw = Math.min(lw, w),
    gh = Math.min(lh, h);
  const cx = cellEdges(w, gw),
    cy = cellEdges(h, gh);
  const sure = classify(rgba, w, cx, cy, p);
  if (!sure) return alpha;
  const L1 = downscale(sure.L0, 4),
    L2 = downscale(L1, 4);
  for (const L of [sure.L0, L1, L2]) blur(L, p.sigma);
  const band = dilate(sure.band, gw, gh, Math.min(Math.max(p.bandDilate, 0), Math.max(gw, gh)));
  const levels: Array<[Plane, number]> = [
    [sure.L0, 2],
    [L1, 8],
    [L2, 32],
  ];
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      if (!band[j * gw + i]) continue;
      const m = cellModel(levels, j, i, p);
      if (!m) continue;
      for (let y = cy[j]!; y < cy[j + 1]!; y++) {
        for (let x = cx[i]!; x < cx[i + 1]!; x++) {
          const px = (y * w + x) * 4;
          let ac = 0;
          for (let c = 0; c < 3; c++) ac += (rgba[px + c]! / 255 - m.bg[c]!) * m.d[c]!;
          ac = Math.min(1, Math.max(0, ac * m.inv));
          const a0 = rgba[px + 3]! / 255;
          const v = Math.round((m.conf * ac + (1 - m.conf) * a0) * 255);
          alpha[y * w + x] = rgba[px + 3]! >= 128 ? Math.max(v, 128) : Math.min(v, 127);
        }
      }
    }
  }
  return alpha;
}
