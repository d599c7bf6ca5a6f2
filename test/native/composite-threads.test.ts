// Compositing over threads gives the same bytes and box for any count, and compositeMask (a mask from
// the caller) equals session.composite; bad threads values and bad compositeMask arguments are refused.
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
const session = new binding.Session(model.path, opts);
t.teardown(() => session.close());
const { width: mw, height: mh } = opts;
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

// A generated figure (0.45 MP) upscaled to 4 MP, and the model's own mask for it; the noise scene
// below gives the edge stages texture to work on.
const photoFile = await syntheticFigure(800, 563, 'png');
const big = await sharp(photoFile).resize(2400).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
session.infer(await sharp(photoFile).resize(mw, mh, { fit: 'fill' }).removeAlpha().raw().toBuffer(), 3);
const photoMask = Float32Array.from(session.outputTensor);
const noise = noiseScene();
const scenes = [
  { name: 'photo 2400x1689', rgba: new Uint8Array(big.data), w: big.info.width, h: big.info.height, mask: photoMask },
  { name: 'noise 1280x1100', rgba: noise.photo, w: noise.width, h: noise.height, mask: noiseMask(mw, mh) },
];
const OPTION_SETS: CompositeOptions[] = [
  { refine: false, decontaminate: false },
  { refine: false, decontaminate: true },
  { refine: true, matting: false, decontaminate: true },
  { refine: true, matting: true, decontaminate: false },
  { refine: true, matting: true, decontaminate: true },
];

function viaMask(rgba: Uint8Array, w: number, h: number, mask: Float32Array, options: CompositeOptions) {
  const out = rgba.slice();
  const box = binding.compositeMask(out, w, h, mask, mw, mh, options);
  return { hash: sha256(out), box };
}

t.test('threads 1, 2, 3 and 8 give the same RGBA and box', async (t) => {
  for (const s of scenes) {
    const roi: [number, number, number, number] = [Math.floor(s.w / 5), Math.floor(s.h / 7), s.w - 9, s.h - 3];
    for (const base of [...OPTION_SETS, { refine: true, decontaminate: true, roi }]) {
      const one = viaMask(s.rgba, s.w, s.h, s.mask, { ...base, threads: 1 });
      for (const threads of [2, 3, 8]) {
        t.same(viaMask(s.rgba, s.w, s.h, s.mask, { ...base, threads }), one, `${s.name} ${JSON.stringify(base)} threads ${threads}`);
      }
    }
  }
});

t.test('compositeMask equals session.composite with the same mask', async (t) => {
  const s = scenes[0]!;
  session.outputTensor.set(s.mask);
  for (const options of [
    OPTION_SETS[4]!,
    { ...OPTION_SETS[2]!, threads: 2 },
    { refine: true, decontaminate: true, roi: [100, 50, 2000, 1600] as [number, number, number, number] },
  ]) {
    const out = s.rgba.slice();
    const box = session.composite(out, s.w, s.h, options);
    t.same(viaMask(s.rgba, s.w, s.h, s.mask, options), { hash: sha256(out), box }, JSON.stringify(options));
  }
  // A mask view with a byteOffset is read from its own offset.
  const padded = new Float32Array(s.mask.length + 3);
  padded.set(s.mask, 3);
  t.same(viaMask(s.rgba, s.w, s.h, padded.subarray(3), OPTION_SETS[4]!), viaMask(s.rgba, s.w, s.h, s.mask, OPTION_SETS[4]!), 'byteOffset view');
});

t.test('tiny images with threads 8', async (t) => {
  for (const [w, h] of [
    [1, 1],
    [2, 3],
    [1, 2000],
    [2000, 1],
  ] as const) {
    const rgba = new Uint8Array(w * h * 4).map((_, i) => (i * 37) & 255);
    for (const options of OPTION_SETS) {
      const one = viaMask(rgba, w, h, photoMask, { ...options, threads: 1 });
      t.same(viaMask(rgba, w, h, photoMask, { ...options, threads: 8 }), one, `${w}x${h} ${JSON.stringify(options)}`);
    }
  }
});

t.test('threads must be an integer from 1 to 64', async (t) => {
  const rgba = new Uint8Array(8 * 8 * 4);
  for (const bad of [0, 65, -1, 1.5, NaN, Infinity, '2', null, true]) {
    const expected = { name: 'TypeError', code: 'ERR_CUTOUT_ARG', message: /for threads/ };
    const options = { refine: true, decontaminate: true, threads: bad as never };
    t.throws(() => session.composite(rgba, 8, 8, options), expected, `session.composite threads: ${String(bad)}`);
    t.throws(() => binding.compositeMask(rgba, 8, 8, photoMask, mw, mh, options), expected, `compositeMask threads: ${String(bad)}`);
  }
  for (const ok of [1, 64, undefined]) t.doesNotThrow(() => session.composite(rgba, 8, 8, { refine: true, decontaminate: true, threads: ok }));
});

t.test('compositeMask refuses bad arguments with coded errors', async (t) => {
  const rgba = new Uint8Array(4 * 4 * 4);
  const mask = new Float32Array(16);
  const o: CompositeOptions = { refine: true, decontaminate: true };
  const type = (code: string, message: RegExp) => ({ name: 'TypeError', code, message });
  t.throws(() => binding.compositeMask(rgba, 4, 4, new Uint8Array(64) as never, 4, 4, o), type('ERR_CUTOUT_ARG', /^Expected a Float32Array for mask/));
  t.throws(() => binding.compositeMask(rgba, 4, 4, null as never, 4, 4, o), type('ERR_CUTOUT_ARG', /^Expected a Float32Array for mask but received null/));
  t.throws(
    () => binding.compositeMask(rgba, 4, 4, mask.subarray(1), 4, 4, o),
    type('ERR_CUTOUT_BAD_LENGTH', /^Expected 16 floats \(4x4\) for mask but received 15$/),
  );
  t.throws(
    () => binding.compositeMask(rgba.subarray(4), 4, 4, mask, 4, 4, o),
    type('ERR_CUTOUT_BAD_LENGTH', /^Expected 64 bytes \(4x4x4\) for rgba but received 60$/),
  );
  t.throws(() => binding.compositeMask(new Float32Array(16) as never, 4, 4, mask, 4, 4, o), type('ERR_CUTOUT_ARG', /^Expected a Uint8Array for rgba/));
  for (const [i, bad] of [
    [1, 0],
    [2, 1.5],
    [4, 0],
    [5, 'x'],
  ] as const) {
    const args: unknown[] = [rgba, 4, 4, mask, 4, 4, o];
    args[i] = bad;
    t.throws(() => (binding.compositeMask as (...a: unknown[]) => unknown)(...args), type('ERR_CUTOUT_ARG', /^Expected an integer/), `argument ${i}: ${bad}`);
  }
  t.throws(() => binding.compositeMask(rgba, 4, 4, mask, 4, 4, { ...o, roi: [0, 0, 5, 4] }), type('ERR_CUTOUT_ARG', /roi\[2\]/));
  t.throws(() => binding.compositeMask(rgba, 4, 4, mask, 4, 4, { ...o, matting: 1 as never }), type('ERR_CUTOUT_ARG', /matting/));
  // rgba is written while the mask is read: one buffer for both is refused.
  const shared = new ArrayBuffer(64 + 64);
  t.throws(() => binding.compositeMask(new Uint8Array(shared, 0, 64), 4, 4, new Float32Array(shared, 32, 16), 4, 4, o), type('ERR_CUTOUT_ARG', /overlap/));
  t.doesNotThrow(() => binding.compositeMask(new Uint8Array(shared, 0, 64), 4, 4, new Float32Array(shared, 64, 16), 4, 4, o), 'adjacent is fine');
  // Detached buffers (transferred away) are refused, not read.
  const gone = (v: ArrayBufferView) => structuredClone(v.buffer, { transfer: [v.buffer as ArrayBuffer] });
  const r2 = new Uint8Array(64);
  gone(r2);
  t.throws(() => binding.compositeMask(r2, 4, 4, mask, 4, 4, o), { code: 'ERR_CUTOUT_DETACHED' });
  const m2 = new Float32Array(16);
  gone(m2);
  t.throws(() => binding.compositeMask(rgba, 4, 4, m2, 4, 4, o), { code: 'ERR_CUTOUT_DETACHED', message: /mask/ });
  t.same(binding.compositeMask(rgba, 4, 4, mask, 4, 4, o), { top: 0, left: 0, width: 0, height: 0 }, 'an all-zero mask: no box');
});
