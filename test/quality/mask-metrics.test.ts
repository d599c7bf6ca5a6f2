import t from 'tap';
import { boundaryF, boundaryMap, diskOffsets, fromRows, iou, makeMatte, maskScores } from '../../bench/quality/metrics.js';

t.test('IoU at 0.5', async (t) => {
  // gt: 2×3 block (6 px); pred: 2×2 block inside it (4 px) → ∩ = 4, ∪ = 6 → IoU = 2/3.
  // 0.5 counts as foreground, 0.49 does not.
  const gt = fromRows([
    [1, 1, 1, 0],
    [1, 1, 1, 0],
    [0, 0, 0, 0],
    [0, 0, 0, 0],
  ]);
  const pred = fromRows([
    [0.5, 1, 0.49, 0],
    [1, 0.9, 0, 0],
    [0, 0, 0, 0],
    [0, 0, 0, 0.2],
  ]);
  t.ok(Math.abs(iou(pred, gt) - 2 / 3) < 1e-12);
  t.equal(iou(makeMatte(2, 2), makeMatte(2, 2)), 1, 'both empty → 1');
  t.equal(iou(makeMatte(2, 2, [1, 1, 1, 1]), makeMatte(2, 2)), 0);
});

t.test('boundary map follows DAVIS seg2bmap', async (t) => {
  // seg            bmap (≠ east, south or south-east; last row: east only;
  // 0 0 0 0        1 1 1 0       last column: south only; bottom-right: never)
  // 0 1 1 0        1 0 1 0
  // 0 1 1 0        1 1 1 0
  // 0 0 0 0        0 0 0 0
  const seg = Uint8Array.of(0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0);
  t.same([...boundaryMap(seg, 4, 4)], [1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 0]);
  // Foreground touching the image border gets no boundary along the border.
  t.same([...boundaryMap(Uint8Array.of(1, 1, 1, 1), 2, 2)], [0, 0, 0, 0]);
});

t.test('disk offsets', async (t) => {
  t.equal(diskOffsets(1).length, 5);
  t.equal(diskOffsets(2).length, 13);
});

t.test('boundary F on hand-made masks', async (t) => {
  // 8×4. gt: x ≥ 4 is foreground → boundary = column 3, rows 0..3 (4 px).
  const gtRows = Array.from({ length: 4 }, () => [0, 0, 0, 0, 1, 1, 1, 1]);
  const gt = fromRows(gtRows);
  // pred shifted by 2 px: x ≥ 6 → boundary column 5 (4 px). Radius 1 → nothing matches → F 0;
  // radius 2 → everything matches → F 1.
  const shifted = fromRows(Array.from({ length: 4 }, () => [0, 0, 0, 0, 0, 0, 1, 1]));
  t.equal(boundaryF(shifted, gt, 1).f, 0);
  t.equal(boundaryF(shifted, gt, 2).f, 1);
  // pred: rows 0-1 x ≥ 6, rows 2-3 x ≥ 4
  //   0 0 0 0 0 0 1 1     bmap: (r0,x5) (r1,x3) (r1,x4) (r1,x5) (r2,x3) (r3,x3) → 6 px
  //   0 0 0 0 0 0 1 1
  //   0 0 0 0 1 1 1 1     radius 1: matched pred px = (1,3) (1,4) (2,3) (3,3) → P = 4/6
  //   0 0 0 0 1 1 1 1     every gt px (r,3) has a pred px within 1 → R = 1
  //   F = 2·(2/3)·1 / (2/3 + 1) = 0.8
  const mixed = fromRows([
    [0, 0, 0, 0, 0, 0, 1, 1],
    [0, 0, 0, 0, 0, 0, 1, 1],
    [0, 0, 0, 0, 1, 1, 1, 1],
    [0, 0, 0, 0, 1, 1, 1, 1],
  ]);
  const b = boundaryF(mixed, gt, 1);
  t.ok(Math.abs(b.precision - 4 / 6) < 1e-12);
  t.equal(b.recall, 1);
  t.ok(Math.abs(b.f - 0.8) < 1e-12);
});

t.test('boundary F edge cases and default tolerance', async (t) => {
  // 854×480: diagonal = 979.65 → ceil(0.008 · 979.65) = ceil(7.837) = 8 px.
  const empty = makeMatte(854, 480);
  const r = boundaryF(empty, empty);
  t.equal(r.tolerancePx, 8);
  t.equal(r.f, 1, 'both empty → 1');
  const gt = fromRows([
    [0, 1],
    [0, 1],
  ]);
  t.equal(boundaryF(makeMatte(2, 2), gt, 1).f, 0, 'empty prediction → 0');
});

t.test('maskScores: MAE uses the soft prediction', async (t) => {
  // |Δ| = .25, 0, .25, 0 → MAE = .125; IoU: pred ≥ .5 = {(0,1),(1,1)} = gt → 1
  const gt = fromRows([
    [0, 1],
    [0, 1],
  ]);
  const pred = fromRows([
    [0.25, 1],
    [0, 0.75],
  ]);
  const s = maskScores(pred, gt);
  t.ok(Math.abs(s.mae - 0.125) < 1e-9);
  t.equal(s.iou, 1);
  t.equal(s.boundaryF, 1);
});
