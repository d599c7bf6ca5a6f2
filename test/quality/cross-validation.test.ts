// Cross-validation helpers: folds by group, the two-dataset objective, coordinate descent, noise.
import t from 'tap';
import { coordinateDescent, foldMeans, foldsOf, objective, pairedDiff, spread, type CvItem, type ItemMetrics } from '../../bench/quality/cross-validation.js';

const items: CvItem[] = [
  { id: 'a1', group: 'a1', category: 'hair', dataset: 'alpha' },
  { id: 'a2', group: 'a2', category: 'plant', dataset: 'alpha' },
  { id: 'd1', group: 'camel', category: 'animal', dataset: 'mask' },
  { id: 'd2', group: 'camel', category: 'animal', dataset: 'mask' },
  { id: 'd3', group: 'car', category: 'vehicle', dataset: 'mask' },
];

t.test('one fold per group: a DAVIS sequence stays whole', async (t) => {
  const folds = foldsOf(items);
  t.same(
    folds.map((f) => [f.group, f.dataset, f.ids]),
    [
      ['a1', 'alpha', ['a1']],
      ['a2', 'alpha', ['a2']],
      ['camel', 'mask', ['d1', 'd2']],
      ['car', 'mask', ['d3']],
    ],
  );
  t.throws(() => foldsOf([...items, { id: 'x', group: 'camel', category: 'hair', dataset: 'alpha' }]), /mixes datasets/);
});

t.test('the objective weighs the datasets equally, relative to the reference', async (t) => {
  const folds = foldsOf(items);
  const ref = new Map<string, ItemMetrics>([
    ['a1', { sad: 10 }],
    ['a2', { sad: 20 }],
    ['d1', { iou: 0.8, boundaryF: 0.8 }],
    ['d2', { iou: 0.8, boundaryF: 0.8 }],
    ['d3', { iou: 0.9, boundaryF: 0.9 }],
  ]);
  t.equal(objective(folds, ref, ref), 1, 'the reference scores 1');
  // Halving every alpha SAD, DAVIS unchanged: (0.5 + 1) / 2.
  const better = new Map(ref);
  better.set('a1', { sad: 5 });
  better.set('a2', { sad: 10 });
  t.equal(objective(folds, better, ref), 0.75);
  // Only the training folds count.
  t.equal(
    objective(
      folds.filter((f) => f.dataset === 'mask'),
      better,
      ref,
    ),
    1,
  );
});

t.test('coordinate descent finds the separable minimum and keeps the start on ties', async (t) => {
  const knobs = [
    { name: 'x', values: [0, 1, 2, 3] },
    { name: 'y', values: ['a', 'b'] },
  ];
  const seen: string[] = [];
  const r = await coordinateDescent(knobs, { x: 0, y: 'a' }, async (s) => {
    seen.push(JSON.stringify(s));
    return ((s.x as number) - 2) ** 2 + (s.y === 'b' ? -1 : 0);
  });
  t.same(r.setting, { x: 2, y: 'b' });
  t.equal(r.score, -1);
  const flat = await coordinateDescent(knobs, { x: 1, y: 'a' }, async () => 5);
  t.same(flat.setting, { x: 1, y: 'a' }, 'a flat response keeps the defaults');
  t.ok(seen.length > 0);
});

t.test('fold means, spread and the noise rule', async (t) => {
  const folds = foldsOf(items);
  const held = new Map(
    folds.map((f) => [
      f.group,
      new Map<string, ItemMetrics>([
        ['d1', { iou: 0.5 }],
        ['d2', { iou: 1 }],
        ['d3', { iou: 0.25 }],
      ]),
    ]),
  );
  t.same(
    foldMeans(
      folds.filter((f) => f.dataset === 'mask'),
      held,
      'iou',
    ),
    [0.75, 0.25],
  );
  const s = spread([1, 2, 3]);
  t.same([s.mean, s.sd, s.folds], [2, 1, 3]);
  t.equal(pairedDiff([1, 2, 3, 4], [1.5, 2.5, 3.5, 4.5]).beyondNoise, true, 'a steady gain is beyond noise');
  t.equal(pairedDiff([1, 2, 3, 4], [2, 1, 4, 3]).beyondNoise, false, 'a mixed one is not');
  t.equal(pairedDiff([1], [5]).beyondNoise, false, 'one fold is never beyond noise');
});
