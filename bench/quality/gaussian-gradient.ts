// Gaussian-derivative gradient magnitude, as in the matting evaluation code that accompanies
// Rhemann et al. (CVPR 2009) / Xu et al. "Deep Image Matting" (gaussgradient.m):
//   halfsize = ceil(σ·sqrt(−2·ln(sqrt(2π)·σ·ε))), ε = 0.01  (σ = 1.4 → halfsize 4, 9×9 kernel)
//   hx[i][j] = G(i−h)·G'(j−h),  hx /= ||hx||_F,  hy = hxᵀ,  convolution with replicated borders.
// hx is separable, so we filter rows with G'/||G'|| and columns with G/||G|| (exactly equal,
// because ||hx||_F = ||G||·||G'|| and replicate padding clamps each axis independently).

import type { Matte } from './matte.js';

function gauss(x: number, sigma: number): number {
  return Math.exp(-(x * x) / (2 * sigma * sigma)) / (sigma * Math.sqrt(2 * Math.PI));
}

function dgauss(x: number, sigma: number): number {
  return (-x * gauss(x, sigma)) / (sigma * sigma);
}

export function gaussianHalfSize(sigma: number, epsilon = 1e-2): number {
  return Math.ceil(sigma * Math.sqrt(-2 * Math.log(Math.sqrt(2 * Math.PI) * sigma * epsilon)));
}

/** Unit-norm 1-D kernels: [smoothing G, derivative G'] of length 2·halfsize+1. */
export function gaussianKernels(sigma: number): { g: Float64Array; dg: Float64Array; half: number } {
  const half = gaussianHalfSize(sigma);
  const size = 2 * half + 1;
  const g = new Float64Array(size);
  const dg = new Float64Array(size);
  let ng = 0;
  let nd = 0;
  for (let i = 0; i < size; i++) {
    g[i] = gauss(i - half, sigma);
    dg[i] = dgauss(i - half, sigma);
    ng += (g[i] as number) ** 2;
    nd += (dg[i] as number) ** 2;
  }
  ng = Math.sqrt(ng);
  nd = Math.sqrt(nd);
  for (let i = 0; i < size; i++) {
    g[i] = (g[i] as number) / ng;
    dg[i] = (dg[i] as number) / nd;
  }
  return { g, dg, half };
}

/** 1-D convolution along x (axis 0) or y (axis 1) with replicated borders. */
function convolveAxis(src: Float64Array, width: number, height: number, kernel: Float64Array, half: number, alongX: boolean): Float64Array {
  const out = new Float64Array(width * height);
  const size = kernel.length;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let acc = 0;
      for (let k = 0; k < size; k++) {
        // convolution: out(p) = Σ_k kernel[k] · src(p − (k − half))
        const off = half - k;
        if (alongX) {
          let xx = x + off;
          xx = xx < 0 ? 0 : xx >= width ? width - 1 : xx;
          acc += (kernel[k] as number) * (src[y * width + xx] as number);
        } else {
          let yy = y + off;
          yy = yy < 0 ? 0 : yy >= height ? height - 1 : yy;
          acc += (kernel[k] as number) * (src[yy * width + x] as number);
        }
      }
      out[y * width + x] = acc;
    }
  }
  return out;
}

/** |∇m| with Gaussian-derivative filters of scale σ (default 1.4). */
export function gradientMagnitude(m: Matte, sigma = 1.4): Float64Array {
  const { width, height } = m;
  const { g, dg, half } = gaussianKernels(sigma);
  const src = Float64Array.from(m.data);
  // gx: derivative along x, smoothing along y; gy: the transpose.
  const gx = convolveAxis(convolveAxis(src, width, height, dg, half, true), width, height, g, half, false);
  const gy = convolveAxis(convolveAxis(src, width, height, g, half, true), width, height, dg, half, false);
  const mag = new Float64Array(width * height);
  for (let i = 0; i < mag.length; i++) mag[i] = Math.hypot(gx[i] as number, gy[i] as number);
  return mag;
}
