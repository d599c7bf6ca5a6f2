// Alpha-matte error measures of Rhemann et al., CVPR 2009 (alphamatting.com), with the
// conventions of the widely used reference code (Deep Image Matting evaluation scripts):
//   SAD  = Σ_R |α − α*| / 1000
//   MSE  = Σ_R (α − α*)² / |R|                    (tables usually show MSE × 1e3)
//   Grad = Σ_R (|∇α| − |∇α*|)² / 1000             (Gaussian-derivative filters, σ = 1.4)
//   Conn = Σ_R |φ(α) − φ(α*)| / 1000              (θ = 0.15, threshold step 0.1, 4-connectivity)
//   MAE  = Σ_R |α − α*| / |R|
// α, α* in [0,1]; R = evaluated region (trimap unknown region, or the whole image).
// See docs/quality.md for the details.

import { gradientMagnitude } from './gaussian-gradient.js';
import { largestComponent } from './connected-components.js';
import { assertSameSize, regionSize, type Matte, type Region } from './matte.js';

function inRegion(region: Region, i: number): boolean {
  return region === undefined || region[i] !== 0;
}

/** Sum of absolute differences over the region, divided by 1000. */
export function sad(pred: Matte, gt: Matte, region?: Region): number {
  assertSameSize(pred, gt);
  let s = 0;
  for (let i = 0; i < gt.data.length; i++) {
    if (inRegion(region, i)) s += Math.abs((pred.data[i] as number) - (gt.data[i] as number));
  }
  return s / 1000;
}

/** Mean squared error over the region (NaN for an empty region). Not scaled. */
export function mse(pred: Matte, gt: Matte, region?: Region): number {
  assertSameSize(pred, gt);
  let s = 0;
  for (let i = 0; i < gt.data.length; i++) {
    if (inRegion(region, i)) {
      const d = (pred.data[i] as number) - (gt.data[i] as number);
      s += d * d;
    }
  }
  const n = regionSize(region, gt.data.length);
  return n === 0 ? Number.NaN : s / n;
}

/** Mean absolute error over the region (NaN for an empty region). */
export function mae(pred: Matte, gt: Matte, region?: Region): number {
  assertSameSize(pred, gt);
  let s = 0;
  for (let i = 0; i < gt.data.length; i++) {
    if (inRegion(region, i)) s += Math.abs((pred.data[i] as number) - (gt.data[i] as number));
  }
  const n = regionSize(region, gt.data.length);
  return n === 0 ? Number.NaN : s / n;
}

function sumOver(map: Float64Array, region: Region): number {
  let s = 0;
  for (let i = 0; i < map.length; i++) if (inRegion(region, i)) s += map[i] as number;
  return s;
}

/** Per-pixel gradient error (|∇α| − |∇α*|)², gradients from Gaussian-derivative filters (σ). */
export function gradientErrorMap(pred: Matte, gt: Matte, sigma = 1.4): Float64Array {
  assertSameSize(pred, gt);
  const gp = gradientMagnitude(pred, sigma);
  const gg = gradientMagnitude(gt, sigma);
  const out = new Float64Array(gg.length);
  for (let i = 0; i < gg.length; i++) {
    const d = (gp[i] as number) - (gg[i] as number);
    out[i] = d * d;
  }
  return out;
}

/** Gradient error: Σ_R (|∇α| − |∇α*|)² / 1000. */
export function gradientError(pred: Matte, gt: Matte, region?: Region, sigma = 1.4): number {
  return sumOver(gradientErrorMap(pred, gt, sigma), region) / 1000;
}

/**
 * Per-pixel connectivity error |φ(α) − φ(α*)|. For thresholds t_k = k·step (k = 1..1/step),
 * Ω_k is the largest 4-connected component of (α ≥ t_k) ∧ (α* ≥ t_k); each pixel gets
 * l = t_{k−1} for the first k at which it is outside Ω_k (l = 1 if it never is).
 * With d = α − l, φ(α) = 1 − d·[d ≥ θ].
 */
export function connectivityErrorMap(pred: Matte, gt: Matte, theta = 0.15, step = 0.1): Float64Array {
  assertSameSize(pred, gt);
  const { width, height } = gt;
  const n = width * height;
  const steps = Math.round(1 / step);
  const level = new Float64Array(n).fill(-1);
  const both = new Uint8Array(n);
  for (let k = 1; k <= steps; k++) {
    const t = k / steps;
    const prev = (k - 1) / steps;
    for (let i = 0; i < n; i++) {
      both[i] = (pred.data[i] as number) >= t && (gt.data[i] as number) >= t ? 1 : 0;
    }
    const omega = largestComponent(both, width, height);
    for (let i = 0; i < n; i++) {
      if (level[i] === -1 && omega[i] === 0) level[i] = prev;
    }
  }
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const l = level[i] === -1 ? 1 : (level[i] as number);
    const dp = (pred.data[i] as number) - l;
    const dg = (gt.data[i] as number) - l;
    const phiP = 1 - (dp >= theta ? dp : 0);
    const phiG = 1 - (dg >= theta ? dg : 0);
    out[i] = Math.abs(phiP - phiG);
  }
  return out;
}

/** Connectivity error: Σ_R |φ(α) − φ(α*)| / 1000 (θ = 0.15, step 0.1). */
export function connectivityError(pred: Matte, gt: Matte, region?: Region, theta = 0.15, step = 0.1): number {
  return sumOver(connectivityErrorMap(pred, gt, theta, step), region) / 1000;
}

export interface AlphaScores {
  sad: number;
  mse: number;
  grad: number;
  conn: number;
  mae: number;
}

/** All alpha measures over one region. */
export function alphaScores(pred: Matte, gt: Matte, region?: Region): AlphaScores {
  return alphaScoresForRegions(pred, gt, [region])[0] as AlphaScores;
}

/** All alpha measures over several regions, computing the gradient and connectivity maps once. */
export function alphaScoresForRegions(pred: Matte, gt: Matte, regions: readonly Region[]): AlphaScores[] {
  const gradMap = gradientErrorMap(pred, gt);
  const connMap = connectivityErrorMap(pred, gt);
  return regions.map((region) => ({
    sad: sad(pred, gt, region),
    mse: mse(pred, gt, region),
    grad: sumOver(gradMap, region) / 1000,
    conn: sumOver(connMap, region) / 1000,
    mae: mae(pred, gt, region),
  }));
}
