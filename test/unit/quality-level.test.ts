// Quality levels: what each runs, and the mirrored-inference helpers on pixels.
import t from 'tap';
import { averageMirrored, mirrorRgb, qualityPlan } from '../../src/worker/quality-level.js';
import { parseQuality } from '../../src/domain/removal.js';

const on = { refine: true, matting: true, decontaminate: true };

t.test('levels bound the work; the switches only turn stages off', async (t) => {
  t.same(qualityPlan('fast', on), { flip: false, refine: false, matting: false, decontaminate: false });
  t.same(qualityPlan('balanced', on), { flip: false, refine: true, matting: true, decontaminate: true });
  t.same(qualityPlan('best', on), { flip: true, refine: true, matting: true, decontaminate: true });
  t.same(qualityPlan('best', { refine: false, matting: true, decontaminate: false }), { flip: true, refine: false, matting: false, decontaminate: false });
  t.same(qualityPlan('fast', on).refine || qualityPlan('fast', { ...on, refine: true }).refine, false, 'fast never refines');
});

t.test('parseQuality names the three levels and nothing else', async (t) => {
  for (const l of ['fast', 'balanced', 'best']) t.equal(parseQuality(l), l);
  for (const bad of ['Best', '', 'high', 1, null, undefined]) t.equal(parseQuality(bad), undefined, String(bad));
});

t.test('mirrorRgb mirrors whole pixels; averageMirrored undoes the mirror before averaging', async (t) => {
  const rgb = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, /* row 2 */ 10, 11, 12, 13, 14, 15, 16, 17, 18]);
  mirrorRgb(rgb, 3, 2);
  t.same([...rgb], [7, 8, 9, 4, 5, 6, 1, 2, 3, 16, 17, 18, 13, 14, 15, 10, 11, 12]);
  const matte = Float32Array.from([0, 0.5, 1, 1, 1, 0]);
  // What the model returns for the mirrored photo of a perfect model: the matte mirrored.
  const mirrored = Float32Array.from([1, 0.5, 0, 0, 1, 1]);
  const a = Float32Array.from(matte);
  averageMirrored(a, mirrored, 3, 2);
  t.same([...a], [...matte], 'agreeing views average to the same matte');
  const b = Float32Array.from(matte);
  averageMirrored(b, Float32Array.from([0, 0, 0, 0, 0, 0]), 3, 2);
  t.same([...b], [0, 0.25, 0.5, 0.5, 0.5, 0]);
});
