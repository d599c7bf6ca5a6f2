import t from 'tap';
import { alphaScores, alphaScoresForRegions, connectivityError, fromRows, gradientError, mae, mse, sad, unknownRegion } from '../../bench/quality/metrics.js';

// 3×3 case used for SAD / MSE / MAE:
//   gt   = 0 0 1      pred = 0 .5  1       |diff| = 0 .5  0
//          0 1 1             0 .75 1                0 .25 0
//          1 1 1             1 1  .5                0 0  .5
//   Σ|diff| = 1.25 → SAD = 1.25/1000 = 0.00125;  MAE = 1.25/9 = 0.138889
//   Σdiff²  = .25 + .0625 + .25 = 0.5625 → MSE = 0.5625/9 = 0.0625
// Trimap (0/128/255) marks (0,1), (1,1), (2,2) unknown — exactly the three wrong pixels:
//   SAD = 0.00125 (same), MAE = 1.25/3 = 0.416667, MSE = 0.5625/3 = 0.1875
const gt = fromRows([
  [0, 0, 1],
  [0, 1, 1],
  [1, 1, 1],
]);
const pred = fromRows([
  [0, 0.5, 1],
  [0, 0.75, 1],
  [1, 1, 0.5],
]);
const trimap = fromRows(
  [
    [0, 128, 255],
    [0, 128, 255],
    [255, 255, 128],
  ].map((r) => r.map((v) => v / 255)),
);

t.test('unknown region of a trimap', async (t) => {
  t.same([...unknownRegion(trimap)], [0, 1, 0, 0, 1, 0, 0, 0, 1]);
});

t.test('SAD, MSE, MAE over the whole image', async (t) => {
  t.ok(Math.abs(sad(pred, gt) - 0.00125) < 1e-9);
  t.ok(Math.abs(mse(pred, gt) - 0.0625) < 1e-9);
  t.ok(Math.abs(mae(pred, gt) - 1.25 / 9) < 1e-9);
});

t.test('SAD, MSE, MAE inside the unknown region', async (t) => {
  const u = unknownRegion(trimap);
  t.ok(Math.abs(sad(pred, gt, u) - 0.00125) < 1e-9);
  t.ok(Math.abs(mse(pred, gt, u) - 0.1875) < 1e-9);
  t.ok(Math.abs(mae(pred, gt, u) - 1.25 / 3) < 1e-9);
  t.ok(Number.isNaN(mse(pred, gt, new Uint8Array(9))), 'empty region → NaN mean');
  t.equal(sad(pred, gt, new Uint8Array(9)), 0, 'empty region → SAD 0');
});

t.test('perfect prediction scores zero everywhere', async (t) => {
  const s = alphaScores(gt, gt);
  t.same(s, { sad: 0, mse: 0, grad: 0, conn: 0, mae: 0 });
});

t.test('size mismatch throws', async (t) => {
  t.throws(() => sad(fromRows([[0, 1]]), gt));
});

t.test('gradient error of a one-pixel step', async (t) => {
  // gt = [0 1] (1×2), pred = [0 0]. Replicated borders make gt an infinite step between x=0 and x=1;
  // gy = 0. With G(u) = exp(−u²/2σ²)/(σ√2π), σ = 1.4, u = −4..4 (halfsize 4):
  //   G(0..4) = .284959 .220797 .102713 .028686 .004810; ‖G‖ = 0.448883, ΣG = 0.998971
  //   G'(u) = −u·G(u)/σ²;  ‖G'‖ = 0.226714
  // Convolution at x=0 picks the taps u ≤ −1 (src(0−u) = 1 for u ≤ −1):
  //   gx(0) = Σ_{u=1..4} u·G(u)/σ² / ‖G'‖ · ΣG/‖G‖ = 0.271185/0.226714 · 0.998971/0.448883 = 2.661997
  // and |gx(1)| is the same by symmetry. pred has zero gradient, so
  //   Grad = (2.661997² + 2.661997²)/1000 = 0.0141725
  const step = fromRows([[0, 1]]);
  const flat = fromRows([[0, 0]]);
  t.ok(Math.abs(gradientError(flat, step) - 0.0141725) < 1e-6, `got ${gradientError(flat, step)}`);
  t.ok(Math.abs(gradientError(step, flat) - 0.0141725) < 1e-6, 'symmetric');
  // Only the first pixel counted: half of it.
  t.ok(Math.abs(gradientError(flat, step, Uint8Array.of(1, 0)) - 0.0141725 / 2) < 1e-6);
  // Gradient *magnitudes* are compared: a mirrored step has the same error as the step itself.
  t.ok(gradientError(fromRows([[1, 0]]), step) < 1e-12);
});

t.test('connectivity error, hand-computed 1×3 cases', async (t) => {
  // gt = [1 1 .5], pred = [1 .4 .7]
  //   both ≥ t: t ≤ .4 → [1 1 1] (one component, Ω = all)
  //             t = .5 → [1 0 1] → components {0}, {2}; largest (first) = {0}
  //   → pixel 0 never leaves Ω: l = 1; pixels 1 and 2 leave at t = .5: l = .4
  //   φ = 1 − d·[d ≥ .15], d = α − l
  //     pixel 0: d = 0 for both → φ = 1, 1 → 0
  //     pixel 1: pred d = 0 → φ 1; gt d = .6 → φ .4 → |Δ| = .6
  //     pixel 2: pred d = .3 → φ .7; gt d = .1 < θ → φ 1 → |Δ| = .3
  //   Conn = (.6 + .3)/1000 = 0.0009   (SAD would be (.6 + .2)/1000 = 0.0008)
  const g = fromRows([[1, 1, 0.5]]);
  const p = fromRows([[1, 0.4, 0.7]]);
  t.ok(Math.abs(connectivityError(p, g) - 0.0009) < 1e-7, `got ${connectivityError(p, g)}`);
  t.ok(Math.abs(sad(p, g) - 0.0008) < 1e-7);
  // θ: a faint stray pixel (pred .1 where gt 0, disconnected, l = 0) has d = .1 < .15 → no error;
  // pred .2 → d = .2 ≥ .15 → φ = .8 vs 1 → .2 error.
  const g2 = fromRows([[1, 0, 0]]);
  t.ok(connectivityError(fromRows([[1, 0, 0.1]]), g2) < 1e-9);
  t.ok(Math.abs(connectivityError(fromRows([[1, 0, 0.2]]), g2) - 0.0002) < 1e-7);
  // Region restricts the sum (pixel 2 only → .3/1000).
  t.ok(Math.abs(connectivityError(p, g, Uint8Array.of(0, 0, 1)) - 0.0003) < 1e-7);
});

t.test('connectivity uses 4-connectivity', async (t) => {
  // gt all 1; pred = 1 0 / 0 1: the two 1s touch only diagonally → two components; the first
  // ({(0,0)}) is Ω. (1,1) leaves Ω at t = .1 → l = 0: pred d = 1 → φ 0, gt d = 1 → φ 0 → no error.
  // Off-diagonal pixels: l = 0, pred d = 0 → φ 1; gt d = 1 → φ 0 → error 1 each → Conn = .002.
  const g = fromRows([
    [1, 1],
    [1, 1],
  ]);
  const p = fromRows([
    [1, 0],
    [0, 1],
  ]);
  t.ok(Math.abs(connectivityError(p, g) - 0.002) < 1e-9);
});

t.test('alphaScoresForRegions matches per-region calls', async (t) => {
  const u = unknownRegion(trimap);
  const [a, b] = alphaScoresForRegions(pred, gt, [u, undefined]);
  t.same(a, alphaScores(pred, gt, u));
  t.same(b, alphaScores(pred, gt));
});
