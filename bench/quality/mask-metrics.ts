// Binary-segmentation measures as in DAVIS (Perazzi et al., CVPR 2016; davis2016 toolkit):
//   J (IoU) of the masks binarised at 0.5,
//   F = 2PR/(P+R) of boundary maps (seg2bmap) matched within a disk of radius
//       ceil(0.008 · image diagonal) pixels,
// plus MAE of the soft prediction against the mask (salient-object convention).

import { assertSameSize, type Matte } from './matte.js';

export function binarize(m: Matte, threshold = 0.5): Uint8Array {
  const out = new Uint8Array(m.data.length);
  for (let i = 0; i < out.length; i++) out[i] = (m.data[i] as number) >= threshold ? 1 : 0;
  return out;
}

/** Intersection over union of pred ≥ t and gt ≥ t; 1 when both are empty (DAVIS convention). */
export function iou(pred: Matte, gt: Matte, threshold = 0.5): number {
  assertSameSize(pred, gt);
  let inter = 0;
  let union = 0;
  for (let i = 0; i < gt.data.length; i++) {
    const p = (pred.data[i] as number) >= threshold;
    const g = (gt.data[i] as number) >= threshold;
    if (p && g) inter++;
    if (p || g) union++;
  }
  return union === 0 ? 1 : inter / union;
}

/**
 * Boundary map of a binary segmentation, as DAVIS seg2bmap (at the same resolution):
 * a pixel is boundary when it differs from its east, south or south-east neighbour; in the last
 * row only east counts, in the last column only south, and the bottom-right pixel never is.
 */
export function boundaryMap(seg: Uint8Array, width: number, height: number): Uint8Array {
  const b = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      const v = seg[i] as number;
      const lastRow = y === height - 1;
      const lastCol = x === width - 1;
      let on = false;
      if (lastRow && lastCol) on = false;
      else if (lastRow) on = v !== seg[i + 1];
      else if (lastCol) on = v !== seg[i + width];
      else on = v !== seg[i + 1] || v !== seg[i + width] || v !== seg[i + width + 1];
      b[i] = on ? 1 : 0;
    }
  }
  return b;
}

/** Offsets of a digital disk {(dx,dy): dx² + dy² ≤ r²} (skimage.morphology.disk). */
export function diskOffsets(radius: number): Array<[number, number]> {
  const r = Math.floor(radius);
  const out: Array<[number, number]> = [];
  for (let dy = -r; dy <= r; dy++) {
    for (let dx = -r; dx <= r; dx++) if (dx * dx + dy * dy <= radius * radius) out.push([dx, dy]);
  }
  return out;
}

/** Number of `from` boundary pixels that have a `to` boundary pixel within the disk. */
function countMatched(from: Uint8Array, to: Uint8Array, width: number, height: number, disk: Array<[number, number]>): number {
  let matched = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (from[y * width + x] === 0) continue;
      for (const [dx, dy] of disk) {
        const xx = x + dx;
        const yy = y + dy;
        if (xx >= 0 && yy >= 0 && xx < width && yy < height && to[yy * width + xx] !== 0) {
          matched++;
          break;
        }
      }
    }
  }
  return matched;
}

export interface BoundaryScore {
  f: number;
  precision: number;
  recall: number;
  /** Match radius in pixels. */
  tolerancePx: number;
}

/**
 * DAVIS boundary F-measure. `tolerance` < 1 is a fraction of the image diagonal
 * (radius = ceil(tolerance · diagonal)); ≥ 1 is a radius in pixels.
 */
export function boundaryF(pred: Matte, gt: Matte, tolerance = 0.008, threshold = 0.5): BoundaryScore {
  assertSameSize(pred, gt);
  const { width, height } = gt;
  const tolerancePx = tolerance >= 1 ? tolerance : Math.ceil(tolerance * Math.hypot(width, height));
  const bp = boundaryMap(binarize(pred, threshold), width, height);
  const bg = boundaryMap(binarize(gt, threshold), width, height);
  let np = 0;
  let ng = 0;
  for (let i = 0; i < bp.length; i++) {
    np += bp[i] as number;
    ng += bg[i] as number;
  }
  let precision: number;
  let recall: number;
  if (np === 0 && ng > 0) {
    precision = 1;
    recall = 0;
  } else if (np > 0 && ng === 0) {
    precision = 0;
    recall = 1;
  } else if (np === 0 && ng === 0) {
    precision = 1;
    recall = 1;
  } else {
    const disk = diskOffsets(tolerancePx);
    precision = countMatched(bp, bg, width, height, disk) / np;
    recall = countMatched(bg, bp, width, height, disk) / ng;
  }
  const f = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { f, precision, recall, tolerancePx };
}

export interface MaskScores {
  iou: number;
  boundaryF: number;
  mae: number;
}

export function maskScores(pred: Matte, gt: Matte): MaskScores {
  assertSameSize(pred, gt);
  let s = 0;
  for (let i = 0; i < gt.data.length; i++) s += Math.abs((pred.data[i] as number) - (gt.data[i] as number));
  return { iou: iou(pred, gt), boundaryF: boundaryF(pred, gt).f, mae: s / gt.data.length };
}
