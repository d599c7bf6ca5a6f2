// compositeMask's options: the three switches are strict booleans, and `tuning` reaches the stages
// (the cross-validated benchmark relies on it): the defaults given explicitly change no byte, a
// setting that disables a stage's effect equals the stage off, and out-of-range values are refused.
import t from 'tap';
import { createHash } from 'node:crypto';
import { loadBinding, type CompositeOptions } from '../../src/native/binding.js';
import { DISC, discMask, discScene } from '../helpers/matting-fixtures.js';

const binding = loadBinding();
const scene = discScene();
const M = 256;
const mask = discMask(M, M);
const run = (options: CompositeOptions): string => {
  const out = scene.photo.slice();
  binding.compositeMask(out, DISC.width, DISC.height, mask, M, M, options);
  return createHash('sha256').update(out).digest('hex');
};
const type = (message: RegExp) => ({ name: 'TypeError', code: 'ERR_CUTOUT_ARG', message });

t.test('refine, matting and decontaminate: booleans, nothing coerced', async (t) => {
  t.throws(() => run({ refine: 1 as never, decontaminate: true }), type(/^Expected a boolean for options\.refine but received a number$/));
  t.throws(() => run({ refine: true, decontaminate: 'yes' as never }), type(/^Expected a boolean for options\.decontaminate but received a string$/));
  t.throws(() => run({ refine: true } as never), type(/^Expected a boolean for options\.decontaminate but received undefined$/));
  t.throws(() => run({ refine: true, matting: null as never, decontaminate: true }), type(/^Expected a boolean for options\.matting but received null$/));
  t.equal(run({ refine: true, decontaminate: true }), run({ refine: true, matting: true, decontaminate: true }), 'matting absent = on');
});

t.test('tuning reaches the stages', async (t) => {
  const base: CompositeOptions = { refine: true, matting: true, decontaminate: true };
  const defaults = {
    refine: { radius: 4, eps: 5e-5, bandLo: 0.05, bandHi: 0.98, bandDilate: 1 },
    matting: { sureBg: 0.05, sureFg: 0.8, bandDilate: 1, sigma: 2, minSupport: 0.05, confidenceMin: 0.05, confidenceRange: 0.15 },
    foreground: { regularization: 1e-5, gradientWeight: 1, smallIterations: 10, bigIterations: 2, maxWorkingPixels: 1 << 19 },
  };
  t.equal(run({ ...base, tuning: defaults }), run(base), 'the defaults, given explicitly, change no byte');
  // |F − B| never reaches 2 in RGB 0..1 units: the colour estimate gets no weight, as if matting were off.
  t.equal(run({ ...base, tuning: { matting: { confidenceMin: 2 } } }), run({ ...base, matting: false }), 'matting with no trust in colour = matting off');
  t.not(run({ ...base, tuning: { refine: { radius: 8 } } }), run(base), 'another refinement radius changes the matte');
  t.not(run({ ...base, tuning: { foreground: { regularization: 1e-2 } } }), run(base), 'a stiffer colour prior changes the colours');
  t.throws(() => run({ ...base, tuning: { refine: { radius: 0 } } }), type(/^Expected a number between 1 and 64 for tuning\.refine\.radius but received 0/));
  t.throws(() => run({ ...base, tuning: { matting: { sigma: 'x' as never } } }), type(/tuning\.matting\.sigma but received a string/));
  t.throws(() => run({ ...base, tuning: 3 as never }), type(/^Expected an object for tuning$/));
});

t.test("timings: the stages' wall times on the result, the bytes unchanged", async (t) => {
  const base: CompositeOptions = { refine: true, matting: true, decontaminate: true };
  const plain = scene.photo.slice();
  const box = binding.compositeMask(plain, DISC.width, DISC.height, mask, M, M, base);
  t.equal(box.timings, undefined, 'absent unless asked for');
  const timed = scene.photo.slice();
  const withTimes = binding.compositeMask(timed, DISC.width, DISC.height, mask, M, M, { ...base, timings: true });
  t.same(Buffer.from(timed), Buffer.from(plain), 'the same bytes');
  t.same({ ...withTimes, timings: undefined }, { ...box, timings: undefined }, 'the same box');
  const times = withTimes.timings!;
  t.same(Object.keys(times).sort(), ['box', 'foreground', 'matting', 'refine', 'roi', 'upsample']);
  t.ok(
    Object.values(times).every((v) => Number.isFinite(v) && v >= 0),
    `every stage a finite ms: ${JSON.stringify(times)}`,
  );
  t.ok(times.upsample + times.refine + times.foreground > 0, 'the work shows up somewhere');
  const off = binding.compositeMask(scene.photo.slice(), DISC.width, DISC.height, mask, M, M, { refine: false, decontaminate: false, timings: true });
  t.equal(off.timings!.refine, 0, 'refinement off: no refine time');
  t.equal(off.timings!.matting, 0, 'and no matting time');
  t.throws(() => run({ ...base, timings: 1 as never }), type(/^Expected a boolean for options\.timings but received a number$/));
});
