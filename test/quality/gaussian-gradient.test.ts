import t from 'tap';
import { gaussianHalfSize, gaussianKernels, gradientMagnitude, makeMatte } from '../../bench/quality/metrics.js';

t.test('kernel size for σ = 1.4', async (t) => {
  // halfsize = ceil(1.4·sqrt(−2·ln(sqrt(2π)·1.4·0.01))) = ceil(1.4·sqrt(−2·ln 0.035093))
  //          = ceil(1.4·sqrt(6.6994)) = ceil(1.4·2.5883) = ceil(3.6237) = 4 → 9 taps
  t.equal(gaussianHalfSize(1.4), 4);
  const { g, dg, half } = gaussianKernels(1.4);
  t.equal(half, 4);
  t.equal(g.length, 9);
  const norm = (k: Float64Array): number => Math.sqrt(k.reduce((s, v) => s + v * v, 0));
  t.ok(Math.abs(norm(g) - 1) < 1e-12 && Math.abs(norm(dg) - 1) < 1e-12, 'unit norm');
  for (let i = 0; i < 9; i++) {
    t.ok(Math.abs(g[i]! - g[8 - i]!) < 1e-15, 'G even');
    t.ok(Math.abs(dg[i]! + dg[8 - i]!) < 1e-15, "G' odd");
  }
});

t.test('constant image has zero gradient', async (t) => {
  const m = makeMatte(5, 4, new Array(20).fill(0.7));
  t.ok(gradientMagnitude(m).every((v) => Math.abs(v) < 1e-6));
});

t.test('separable filtering equals the 2-D reference filter (9×9 hx, replicate borders)', async (t) => {
  // Reference: hx[i][j] = G(i−4)·G'(j−4), hx /= ‖hx‖_F, hy = hxᵀ, 2-D convolution with
  // replicated borders (gaussgradient.m / imfilter 'replicate','conv').
  const s = 1.4;
  const G = (u: number): number => Math.exp(-(u * u) / (2 * s * s)) / (s * Math.sqrt(2 * Math.PI));
  const D = (u: number): number => (-u * G(u)) / (s * s);
  const hx: number[][] = [];
  let n = 0;
  for (let i = 0; i < 9; i++) {
    hx.push([]);
    for (let j = 0; j < 9; j++) {
      const v = G(i - 4) * D(j - 4);
      hx[i]!.push(v);
      n += v * v;
    }
  }
  n = Math.sqrt(n);
  const w = 7;
  const h = 5;
  let seed = 1;
  const rnd = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const vals = Array.from({ length: w * h }, () => Math.round(rnd() * 255) / 255);
  const m = makeMatte(w, h, vals);
  const at = (y: number, x: number): number => m.data[Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))]!;
  const mag = gradientMagnitude(m, s);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let gx = 0;
      let gy = 0;
      for (let i = 0; i < 9; i++) {
        for (let j = 0; j < 9; j++) {
          // conv: out(y,x) = Σ k(i,j)·src(y − (i−4), x − (j−4)); hy(i,j) = hx(j,i)
          gx += (hx[i]![j]! / n) * at(y - (i - 4), x - (j - 4));
          gy += (hx[j]![i]! / n) * at(y - (i - 4), x - (j - 4));
        }
      }
      t.ok(Math.abs(Math.hypot(gx, gy) - mag[y * w + x]!) < 1e-5, `pixel ${x},${y}`);
    }
  }
});
