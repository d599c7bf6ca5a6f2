import t from 'tap';
import { backdropCorrectedReference, compositeOver, estimateBackdrop, fromRows, inputColourReference, meanRgbError } from '../../bench/quality/metrics.js';

t.test('straight-alpha composite over green', async (t) => {
  // (255,0,0) at α = 128/255 = .50196 over (0,255,0):
  //   R = .50196·255 = 128, G = .49804·255 = 127, B = 0
  const c = compositeOver(Uint8Array.of(255, 0, 0, 128), 1);
  t.ok(Math.abs(c[0]! - 128) < 1e-3 && Math.abs(c[1]! - 127) < 1e-3 && c[2] === 0);
});

t.test('input-colour reference', async (t) => {
  // α* = .5, I = (100, 100, 100) → .5·I + .5·(0,255,0) = (50, 177.5, 50)
  const r = inputColourReference(Uint8Array.of(100, 100, 100), 3, fromRows([[0.5]]));
  t.same([...r], [50, 177.5, 50]);
});

t.test('backdrop estimate and backdrop-corrected reference', async (t) => {
  // 3×1 image; known background at x = 0 (10,20,30) and x = 2 (30,40,50).
  // Pixel 1's 9×9 window (radius 4) covers both → B̂ = (20, 30, 40); known pixels too.
  const input = Uint8Array.of(10, 20, 30, 100, 100, 100, 30, 40, 50);
  const b = estimateBackdrop(input, 3, 3, 1, Uint8Array.of(1, 0, 1));
  t.same([...b.slice(3, 6)], [20, 30, 40]);
  // α* = .5 at pixel 1: ref = I + (1 − α*)·(G − B̂) = (100 − 10, 100 + 112.5, 100 − 20) = (90, 212.5, 80)
  const alpha = fromRows([[0, 0.5, 0]]);
  const ref = backdropCorrectedReference(input, 3, alpha, b);
  t.same([...ref.slice(3, 6)], [90, 212.5, 80]);
  // Background pixels (α* = 0): I − B̂ + G, with B̂ = (20,30,40) for all three here → x=0: (0, 245, 0) clamped.
  t.same([...ref.slice(0, 3)], [0, 245, 0]);
});

t.test('mean RGB error over a region', async (t) => {
  // pixel 0: |Δ| = 3, 0, 0 ; pixel 1: |Δ| = 6, 6, 6 → whole: (3 + 18)/(3·2) = 3.5; region {1}: 6
  const a = Float32Array.of(0, 0, 0, 10, 10, 10);
  const b = Float32Array.of(3, 0, 0, 4, 16, 4);
  t.equal(meanRgbError(a, b), 3.5);
  t.equal(meanRgbError(a, b, Uint8Array.of(0, 1)), 6);
});
