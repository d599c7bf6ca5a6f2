// Quality levels: what each runs, and the mirrored-inference helpers on pixels.
import t from 'tap';
import { fuseMirrored, mirrorRgb, qualityPlan } from '../../src/worker/quality-level.js';
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

t.test('mirrorRgb mirrors whole pixels; fuseMirrored undoes the mirror and decides only where the matte is unsure', async (t) => {
  const rgb = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, /* row 2 */ 10, 11, 12, 13, 14, 15, 16, 17, 18]);
  mirrorRgb(rgb, 3, 2);
  t.same([...rgb], [7, 8, 9, 4, 5, 6, 1, 2, 3, 16, 17, 18, 13, 14, 15, 10, 11, 12]);
  const matte = Float32Array.from([0, 0.5, 1, 0.05, 0.95, 0.3]);
  // The mirrored photo's matte, as the model returns it (mirrored): row 1 reads 0.25 0.75 0.5 unmirrored, row 2 0.2 0.8 0.6.
  const mirrored = Float32Array.from([0.5, 0.75, 0.25, 0.6, 0.8, 0.2]);
  const a = Float32Array.from(matte);
  fuseMirrored(a, mirrored, 3, 2);
  t.same([...a], [...Float32Array.from([0, 0.75, 1, 0.05, 0.95, 0.6])], "only 0.5 and 0.3 (unsure: between 0.1 and 0.9) take the mirror's value");
});
