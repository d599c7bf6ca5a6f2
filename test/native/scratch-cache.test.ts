// The block cache (native/src/scratch.h): the composite's scratch and ONNX Runtime's tensors. By
// default blocks are kept (up to 1 GiB) between composites and model runs, reused dirty without
// changing a byte of any result, split and merged (a run's tensors and a photo's passes share the
// same pages), bounded by the limit (0: nothing kept), and handed back by releaseScratch; bad limits
// refused.
import t from 'tap';
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { loadBinding, sessionOptionsFor, type CompositeOptions } from '../../src/native/binding.js';
import { modelEntry } from '../../src/model/manifest.js';
import { syntheticFigure } from '../helpers/core-fixtures.js';
import { noiseMask, noiseScene } from '../helpers/matting-fixtures.js';

const binding = loadBinding();
const model = modelEntry();
const opts = sessionOptionsFor(model.entry, 2);
const { width: mw, height: mh } = opts;
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const DEFAULT_LIMIT = binding.scratchCache().limit;
const session = new binding.Session(model.path, opts);
const photoFile = await syntheticFigure(800, 563, 'png');
const photo = await sharp(photoFile).resize(1600).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
session.infer(await sharp(photoFile).resize(mw, mh, { fit: 'fill' }).removeAlpha().raw().toBuffer(), 3);
const photoMask = Float32Array.from(session.outputTensor);
session.close();
const noise = noiseScene();
const scenes = [
  { name: 'photo', rgba: new Uint8Array(photo.data), w: photo.info.width, h: photo.info.height, mask: photoMask },
  { name: 'noise', rgba: noise.photo, w: noise.width, h: noise.height, mask: noiseMask(mw, mh) },
];
const ALL: CompositeOptions = { refine: true, matting: true, decontaminate: true, threads: 2 };

function composite(s: (typeof scenes)[number]): string {
  const out = s.rgba.slice();
  const box = binding.compositeMask(out, s.w, s.h, s.mask, mw, mh, ALL);
  return `${sha256(out)} ${JSON.stringify(box)}`;
}

t.teardown(() => {
  binding.scratchCache(DEFAULT_LIMIT);
  binding.releaseScratch();
});

t.test('kept by default, up to 1 GiB; limit 0 keeps nothing', async (t) => {
  t.equal(DEFAULT_LIMIT, 2 ** 30, 'the default limit');
  binding.releaseScratch();
  composite(scenes[0]!);
  t.ok(binding.scratchCache().cached > 8 * 1024 * 1024, 'a composite leaves its blocks for the next one');
  binding.scratchCache(0);
  t.equal(binding.scratchCache().cached, 0, 'a limit of 0 hands them back');
  composite(scenes[0]!);
  t.equal(binding.scratchCache().cached, 0, 'and keeps nothing after a composite');
  binding.scratchCache(DEFAULT_LIMIT);
});

t.test("a model run's tensors come from the cache and go back to it: the next run finds them mapped", async (t) => {
  const s = new binding.Session(model.path, opts);
  const rgb = new Uint8Array(mw * mh * 3).fill(90);
  binding.releaseScratch();
  const loaded = binding.ortBytesInUse();
  t.ok(loaded > 1024 * 1024, `the session's weights are held through the allocator (${(loaded / 2 ** 20).toFixed(1)} MB)`);
  s.infer(rgb, 3);
  const afterRun = binding.scratchCache().cached;
  t.ok(afterRun > 32 * 1024 * 1024, `a run's freed tensors stay cached (${(afterRun / 2 ** 20).toFixed(0)} MB)`);
  t.equal(binding.ortBytesInUse(), loaded, 'nothing of the run is still held by ONNX Runtime');
  const first = Float32Array.from(s.infer(rgb, 3));
  const f0 = process.resourceUsage().minorPageFault;
  const again = s.infer(rgb, 3);
  const faults = process.resourceUsage().minorPageFault - f0;
  t.ok(faults < 1000, `a run on kept blocks faults next to nothing in (${faults} minor faults; ~50,000 fresh)`);
  t.same(again, first, 'reused blocks change no value of the mask');
  t.ok(binding.releaseScratch() >= afterRun, 'releaseScratch hands the tensors back too');
  t.equal(binding.scratchCache().cached, 0);
  s.close();
});

t.test('kept blocks are reused dirty and change no byte', async (t) => {
  binding.scratchCache(0);
  const fresh = scenes.map(composite); // every block a fresh (zeroed) mapping
  binding.scratchCache(DEFAULT_LIMIT);
  binding.scratchCache(256 * 1024 * 1024);
  // Each scene after the other fills the cache with its own data; the next one reuses those blocks.
  for (let round = 0; round < 2; round++) {
    scenes.forEach((s, i) => t.equal(composite(s), fresh[i], `round ${round}, ${s.name}: the same bytes and box`));
  }
  const { cached } = binding.scratchCache();
  t.ok(cached >= 8 * 1024 * 1024, `blocks kept between composites (${(cached / 2 ** 20).toFixed(1)} MB)`);
  t.ok(cached <= 256 * 1024 * 1024, 'within the limit');
});

t.test('the limit bounds the cache; release hands everything back', async (t) => {
  binding.scratchCache(256 * 1024 * 1024);
  composite(scenes[0]!);
  const before = binding.scratchCache().cached;
  t.ok(before > 0);
  binding.scratchCache(4 * 1024 * 1024);
  t.ok(binding.scratchCache().cached <= 4 * 1024 * 1024, 'lowering the limit releases the excess');
  composite(scenes[0]!);
  t.ok(binding.scratchCache().cached <= 4 * 1024 * 1024, 'a composite keeps no more than the limit');
  binding.scratchCache(256 * 1024 * 1024);
  composite(scenes[1]!);
  const held = binding.scratchCache().cached;
  t.equal(binding.releaseScratch(), held, 'releaseScratch returns the bytes it unmapped');
  t.equal(binding.scratchCache().cached, 0);
  t.equal(binding.releaseScratch(), 0, 'twice: nothing left');
});

t.test('bad limits are refused', async (t) => {
  t.throws(() => binding.scratchCache(-1), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.scratchCache(Number.NaN), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.scratchCache('64' as unknown as number), { code: 'ERR_CUTOUT_ARG' });
  t.throws(() => binding.scratchCache(2 ** 41), { code: 'ERR_CUTOUT_ARG' });
});

t.test('in use, its peak and the resident free blocks are counted; one run fits in one chunk', async (t) => {
  const s = new binding.Session(model.path, opts);
  const rgb = new Uint8Array(mw * mh * 3).fill(90);
  binding.releaseScratch();
  const before = binding.scratchCache();
  const ort = binding.ortBytesInUse();
  t.ok(
    Math.abs(before.inUse - ort) < 4 * 1024 * 1024,
    `in use between runs: the weights ONNX Runtime keeps (${before.inUse} bytes in blocks; ${ort} through its allocator, small ones from malloc)`,
  );
  t.equal(before.cachedResident, 0, 'nothing free is resident after a release');
  s.infer(rgb, 3);
  const run = binding.scratchCache();
  t.equal(run.inUse, before.inUse, 'the run gave its tensors back');
  const need = run.peakInUse - run.inUse;
  t.ok(need > 32 * 1024 * 1024, `its peak counted the tensors (${(need / 2 ** 20).toFixed(0)} MB above the weights)`);
  t.equal(binding.scratchCache().peakInUse, run.inUse, 'each read starts the peak again from what is in use');
  t.ok(
    run.cached <= 256 * 1024 * 1024,
    `the run in one 256 MiB chunk (${(run.cached / 2 ** 20).toFixed(0)} MB free mapped; the weights' chunk was released around them)`,
  );
  t.ok(
    run.cachedResident >= need && run.cachedResident < need + 32 * 1024 * 1024,
    `resident: what the run touched, ${(run.cachedResident / 2 ** 20).toFixed(0)} MB of ${(run.cached / 2 ** 20).toFixed(0)} free`,
  );
  const first = Float32Array.from(s.infer(rgb, 3));
  const f0 = process.resourceUsage().minorPageFault;
  const again = s.infer(rgb, 3);
  t.ok(process.resourceUsage().minorPageFault - f0 < 1000, 'the next run finds it mapped');
  t.same(again, first, 'and gives the same mask');
  t.equal(binding.scratchCache().cachedResident, run.cachedResident, 'touching no more of the chunk');
  binding.releaseScratch();
  t.equal(binding.scratchCache().cachedResident, 0, 'releaseScratch hands it all back');
  s.close();
});
